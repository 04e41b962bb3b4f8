-- KEYS: claim hash, claims index, the claim domain's claims index, pipeline
-- hash, the claim protocol's claims index, the protocol names index.
-- ARGV: namespace, claim ID, title, body, domain, createdAt, sources (a
-- JSON array), pipeline version, pipeline doc, next lease, the claim's
-- protocol ('' for none), its author's key ID and name ('' for none),
-- its updatedAt, then the open slots as (id, role, layer name) triples.
-- prism.Store.CreateClaimPipeline: both checks, then both writes.
local ns, claim = ARGV[1], ARGV[2]
if redis.call('EXISTS', KEYS[1]) == 1 then
  return fail('claim_exists')
end
if redis.call('EXISTS', KEYS[4]) == 1 then
  return fail('pipeline_exists')
end
put_claim(ns, KEYS[1], KEYS[2], KEYS[3], KEYS[5], KEYS[6], claim, ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[11], ARGV[12], ARGV[13], ARGV[14])
redis.call('HSET', KEYS[4], 'version', ARGV[8], 'doc', ARGV[9])
set_work(ns, claim, ARGV[5], {unpack(ARGV, 15)})
set_lease(ns, claim, ARGV[10])
return 1
