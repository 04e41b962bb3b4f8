-- KEYS: the job-queue index matching the filter.
-- ARGV: namespace, r (negative for the oldest, else in [0,1)), the asking
-- agent's key ID ('' for nobody in particular), how many of the oldest
-- eligible slots to pass over.
-- Returns the job as push_job writes it, or nil when no slot is eligible. The pick is lib.lua's pick_job; the slot and holders keys are
-- derived from the namespace, under the same hash tag as KEYS[1].
local ns = ARGV[1]
local id, claim_id, fields = pick_job(KEYS[1], ns, tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4]))
if not id then
  flush_leaving()
  return nil
end
local out = {}
push_job(out, ns, id, claim_id, fields)
-- A pick takes nothing, but an entry it passed over as no longer open
-- leaves the index (first).
flush_leaving()
return out
