-- KEYS: claims index. ARGV: namespace, upper bound ("+" or "(<id>"), limit,
-- order (latest or top).
-- Newest first: the index holds every claim ID with score 0, so reverse
-- lexicographic order is reverse creation order. With top, the same claims
-- with the most comments first, the newest of those tied first.
local out = {}
local ids = redis.call('ZREVRANGEBYLEX', KEYS[1], ARGV[2], '-', 'LIMIT', 0, tonumber(ARGV[3]))
if ARGV[4] == 'top' then
  local comments = {}
  for _, id in ipairs(ids) do
    comments[id] = redis.call('LLEN', ARGV[1] .. 'comments:' .. id)
  end
  table.sort(ids, function(a, b)
    if comments[a] ~= comments[b] then
      return comments[a] > comments[b]
    end
    return a > b
  end)
end
for _, id in ipairs(ids) do
  out[#out + 1] = read_claim(ARGV[1] .. 'claim:' .. id)
end
return out
