-- KEYS: the protocol names index (claims:protocols), its marker of
-- claims stored before it indexed (claims:protocols:indexed).
-- ARGV: namespace, a name ('' for every one).
-- slots.ClaimStore.ProtocolUses: for each name claims were created under,
-- or the one asked for, the name, how many claims its index holds and the
-- newest one's createdAt (Go orders and cuts them); or protocols_unindexed
-- while claims stored before the names index may be missing from it.
if redis.call('EXISTS', KEYS[2]) == 0 then
  return fail('protocols_unindexed')
end
local ns, names = ARGV[1], {}
if ARGV[2] == '' then
  names = redis.call('ZRANGE', KEYS[1], 0, -1)
elseif redis.call('ZSCORE', KEYS[1], ARGV[2]) then
  names = {ARGV[2]}
end
local out = {}
for _, name in ipairs(names) do
  local index = ns .. 'claims:protocol:' .. name
  local newest = redis.call('ZREVRANGEBYLEX', index, '+', '-', 'LIMIT', 0, 1)[1]
  out[#out + 1] = name
  out[#out + 1] = redis.call('ZCARD', index)
  out[#out + 1] = newest and redis.call('HGET', ns .. 'claim:' .. newest, 'createdAt') or '0'
end
return out
