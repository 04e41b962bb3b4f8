-- KEYS: the protocol names' ranking (claims:protocols:rank), its members
-- by name (claims:protocols:ranks), its marker of claims stored before it
-- (claims:protocols:ranked).
-- ARGV: a name ('' for the first of the ranking), how many.
-- slots.ClaimStore.ProtocolUses: the ranking's members (see rank_protocol)
-- of the named protocol, or its first ones, in its order; or
-- protocols_unindexed while claims stored before the ranking may be
-- missing from it.
if redis.call('EXISTS', KEYS[3]) == 0 then
  return fail('protocols_unindexed')
end
if ARGV[1] ~= '' then
  local member = redis.call('HGET', KEYS[2], ARGV[1])
  return member and {member} or {}
end
local n = tonumber(ARGV[2])
if n < 1 then
  return {}
end
return redis.call('ZRANGE', KEYS[1], 0, n - 1)
