-- KEYS: claim hash, its slots list. ARGV: namespace.
-- One script so a concurrent reconfigure cannot show a half-replaced list.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return fail('claim_not_found')
end
local out = {}
for _, id in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do
  out[#out + 1] = read_slot(ARGV[1] .. 'slot:' .. id)
end
return out
