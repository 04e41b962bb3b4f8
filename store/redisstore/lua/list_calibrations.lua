-- KEYS: claim hash, its calibrations list.
-- ARGV: the most calibrations returned.
-- Returns the claim's latest calibrations' JSON, oldest first.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return fail('claim_not_found')
end
local n = tonumber(ARGV[1])
if n < 1 then
  return {}
end
return redis.call('LRANGE', KEYS[2], -n, -1)
