-- KEYS: pipeline hash, claim hash.
-- ARGV: namespace, claim ID, version, doc, next lease, domain, then the open
-- slots as (id, role, layer) triples.
local ns, claim = ARGV[1], ARGV[2]
if redis.call('EXISTS', KEYS[1]) == 1 then
  return fail('pipeline_exists')
end
if redis.call('EXISTS', KEYS[2]) == 0 then
  return fail('claim_not_found')
end
redis.call('HSET', KEYS[1], 'version', ARGV[3], 'doc', ARGV[4])
set_work(ns, claim, ARGV[6], {unpack(ARGV, 7)})
set_lease(ns, claim, ARGV[5])
return 1
