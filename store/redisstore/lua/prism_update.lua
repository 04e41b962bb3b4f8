-- KEYS: pipeline hash, claim hash, the claim's role-slot list, balances.
-- ARGV: namespace, claim ID, new version, doc, next lease, domain, new
-- claim domain ('' for none), the pipeline's updatedAt, number of
-- credits, the credits as (key, amount) pairs, then the open slots as (id, role, layer name) triples.
-- Saves the pipeline if its stored version is the one before, with every
-- effect, and returns 1; otherwise changes nothing and returns the stored
-- document, so the caller can apply its change again without reading.
local ns, claim = ARGV[1], ARGV[2]
local cur = redis.call('HMGET', KEYS[1], 'version', 'doc')
if not cur[1] then
  return fail('pipeline_not_found')
end
if tonumber(cur[1]) ~= tonumber(ARGV[3]) - 1 then
  return cur[2]
end
redis.call('HSET', KEYS[1], 'version', ARGV[3], 'doc', ARGV[4])
local ncredits = tonumber(ARGV[9])
for i = 10, 9 + 2 * ncredits, 2 do
  redis.call('HINCRBY', KEYS[4], ARGV[i], ARGV[i + 1])
end
set_work(ns, claim, ARGV[6], {unpack(ARGV, 10 + 2 * ncredits)})
set_lease(ns, claim, ARGV[5])
if ARGV[7] ~= '' then
  set_claim_domain(ns, claim, KEYS[2], KEYS[3], ARGV[7], ARGV[8])
end
return 1
