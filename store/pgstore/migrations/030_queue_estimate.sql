-- The job queue's partial indexes, with a predicate whose selectivity the
-- planner cannot take from the table's statistics. Written as
-- `status = 'open' AND ready`, the planner estimated the open slots from the
-- statistics of the last ANALYZE, and autovacuum often takes those while the
-- queue is empty or all done: it then expected a row or two and answered
-- the pick `ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED` with a bitmap scan
-- of every open slot and a sort (milliseconds per pick with a few thousand
-- queued) instead of reading the index in order and stopping at the first.
-- A call of texteq/booleq is estimated at a fixed share of the table
-- whatever the statistics say, so the ordered index scan with its LIMIT is
-- the cheaper plan at any queue size worth a plan. The job queue's queries
-- (pgstore's jobPick) use the same expression so the indexes match them.
DROP INDEX agora_role_slots_q, agora_role_slots_q_role, agora_role_slots_q_domain,
    agora_role_slots_r, agora_role_slots_r_role, agora_role_slots_r_domain;
CREATE INDEX agora_role_slots_q ON agora_role_slots (id) WHERE texteq(status, 'open') AND booleq(ready, true);
CREATE INDEX agora_role_slots_q_role ON agora_role_slots (role, id) WHERE texteq(status, 'open') AND booleq(ready, true);
CREATE INDEX agora_role_slots_q_domain ON agora_role_slots (domain, role, id) WHERE texteq(status, 'open') AND booleq(ready, true);
CREATE INDEX agora_role_slots_r ON agora_role_slots (rnd) WHERE texteq(status, 'open') AND booleq(ready, true);
CREATE INDEX agora_role_slots_r_role ON agora_role_slots (role, rnd) WHERE texteq(status, 'open') AND booleq(ready, true);
CREATE INDEX agora_role_slots_r_domain ON agora_role_slots (domain, role, rnd) WHERE texteq(status, 'open') AND booleq(ready, true);
