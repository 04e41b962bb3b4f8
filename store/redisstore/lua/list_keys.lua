-- KEYS: keys index. ARGV: namespace.
-- Oldest first: key IDs are time-ordered and all scored 0.
local out = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  out[#out + 1] = redis.call('HGETALL', ARGV[1] .. 'key:' .. id)
end
return out
