-- A finish (taken → done) rewrites its slot in place, as a HOT update: no
-- new entry in any index, where it used to add one to the primary key, the
-- claim index and the holder index each. PostgreSQL updates a row in place
-- only when no column any index reads, in its keys or its predicate, changes
-- value, and the job queue's and the leases' partial indexes read status in
-- their predicates. They now read two generated columns instead, which a
-- finish leaves as they were:
--   is_open    status = 'open'; false before a finish and after it.
--   lease_due  the lease's expiry while the slot is taken with a lease
--              (slots.Slot.Lapsed's test), else NULL; NULL before and after
--              the finish of a slot taken without a lease (the default), so
--              only a leased slot's finish still leaves the leases index
--              by a new row version.
-- The queue's predicate keeps the shape of migration 030 (two function
-- calls, estimated at a fixed share of the table whatever its statistics).
-- A HOT update also needs room on the row's page: fillfactor 70 leaves it
-- on pages written from now on (the take's new version lands on such a
-- page, and its finish beside it).
ALTER TABLE agora_role_slots
    ADD COLUMN is_open boolean GENERATED ALWAYS AS (status = 'open') STORED,
    ADD COLUMN lease_due bigint GENERATED ALWAYS AS (
        CASE WHEN status = 'taken' AND lease_expires_at <> 0 THEN lease_expires_at END) STORED;
ALTER TABLE agora_role_slots SET (fillfactor = 70);
DROP INDEX agora_role_slots_q, agora_role_slots_q_role, agora_role_slots_q_domain,
    agora_role_slots_r, agora_role_slots_r_role, agora_role_slots_r_domain, agora_role_slots_leases;
CREATE INDEX agora_role_slots_q ON agora_role_slots (id) WHERE booleq(is_open, true) AND booleq(ready, true);
CREATE INDEX agora_role_slots_q_role ON agora_role_slots (role, id) WHERE booleq(is_open, true) AND booleq(ready, true);
CREATE INDEX agora_role_slots_q_domain ON agora_role_slots (domain, role, id) WHERE booleq(is_open, true) AND booleq(ready, true);
CREATE INDEX agora_role_slots_r ON agora_role_slots (rnd) WHERE booleq(is_open, true) AND booleq(ready, true);
CREATE INDEX agora_role_slots_r_role ON agora_role_slots (role, rnd) WHERE booleq(is_open, true) AND booleq(ready, true);
CREATE INDEX agora_role_slots_r_domain ON agora_role_slots (domain, role, rnd) WHERE booleq(is_open, true) AND booleq(ready, true);
CREATE INDEX agora_role_slots_leases ON agora_role_slots (lease_due) WHERE lease_due IS NOT NULL;
