-- KEYS: the job-queue index matching the filter.
-- ARGV: namespace, r (negative for the oldest, else in [0,1)), key ID,
-- agent name, avatar URL, now, lease expiry ("0" for none).
-- Returns {slot fields, claim fields, comment JSONs} of the slot it took, or
-- nil when no slot is eligible.
--
-- NextOpenSlot's pick (lib.lua's pick_job: open slots of claims where the
-- agent holds nothing) and TakeSlot's take (assign_slot) in one script, so
-- the slot picked is the slot taken: no other caller sees it open between
-- the two. Keys are derived from the namespace, under KEYS[1]'s hash tag.
local ns, key_id = ARGV[1], ARGV[3]
local id, claim_id = pick_job(KEYS[1], ns, tonumber(ARGV[2]), key_id)
if not id then
  return nil
end
assign_slot(ns, id, ns .. 'holders:' .. claim_id, key_id, ARGV[4], ARGV[5], ARGV[6], ARGV[7])
dequeue(ns, id, redis.call('HGET', ns .. 'slot:' .. id, 'role'), redis.call('HGET', ns .. 'claim:' .. claim_id, 'domain'))
return job_reply(ns, id, claim_id)
