-- KEYS: claim hash, its calibrations list, its role-slot list.
-- ARGV: namespace, claim ID, the calibration's JSON, its top domain, its
-- createdAt.
-- Appends the calibration and makes its top domain the claim's, with
-- everything keyed by the domain (set_claim_domain), in one step.
local ns = ARGV[1]
if redis.call('EXISTS', KEYS[1]) == 0 then
  return fail('claim_not_found')
end
redis.call('RPUSH', KEYS[2], ARGV[3])
set_claim_domain(ns, ARGV[2], KEYS[1], KEYS[3], ARGV[4], ARGV[5])
return 1
