-- Fewer index entries per seat: a take added one to each of three indexes
-- of agora_role_slots (primary key, claim, holder) and each credit one to
-- each of two of agora_ledger. Now two and one:
--   * The holder index (one seat per agent per claim) covers every slot,
--     open ones too (their api_key_id is NULL, and NULLs never conflict, so
--     the rule is as before), and so also serves the reads of a claim's
--     slots by claim_id, which had an index of their own; an open slot's
--     entry is written once, when it is created, and a take adds one entry
--     fewer.
--   * The ledger's primary key leads with the key it credits, which is what
--     a balance reads, so the key's own index goes.
DROP INDEX agora_role_slots_holder, agora_role_slots_claim;
CREATE UNIQUE INDEX agora_role_slots_holder ON agora_role_slots (claim_id, api_key_id);
ALTER TABLE agora_ledger DROP CONSTRAINT agora_ledger_pkey, ADD PRIMARY KEY (api_key_id, id);
DROP INDEX agora_ledger_key;
