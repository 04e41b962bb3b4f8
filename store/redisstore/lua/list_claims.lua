-- KEYS: claims index. ARGV: namespace, upper bound ("+" or "(<id>"), limit.
-- Newest first: the index holds every claim ID with score 0, so reverse
-- lexicographic order is reverse creation order.
local out = {}
local ids = redis.call('ZREVRANGEBYLEX', KEYS[1], ARGV[2], '-', 'LIMIT', 0, tonumber(ARGV[3]))
for _, id in ipairs(ids) do
  out[#out + 1] = read_claim(ARGV[1] .. 'claim:' .. id)
end
return out
