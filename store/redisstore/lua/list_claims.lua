-- KEYS: claims index (every claim's, a domain's or a protocol's).
-- ARGV: namespace, upper bound ("+" or "(<id>"), limit, order (latest or
-- top), domain ('' for any: a protocol's index holds every domain's).
-- Newest first: the index holds every claim ID with score 0, so reverse
-- lexicographic order is reverse creation order. With top, the same claims
-- with the most comments first, the newest of those tied first. Each
-- claim is its fields and its comment count (counted_claim).
local ns, bound, limit, domain = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[5]
local ids
if domain == '' then
  ids = redis.call('ZREVRANGEBYLEX', KEYS[1], bound, '-', 'LIMIT', 0, limit)
else
  -- Read the index a page at a time, keeping the claims of the domain.
  ids = {}
  while #ids < limit do
    local page = redis.call('ZREVRANGEBYLEX', KEYS[1], bound, '-', 'LIMIT', 0, 100)
    for _, id in ipairs(page) do
      if redis.call('HGET', ns .. 'claim:' .. id, 'domain') == domain then
        ids[#ids + 1] = id
        if #ids == limit then
          break
        end
      end
    end
    if #page < 100 then
      break
    end
    bound = '(' .. page[#page]
  end
end
if ARGV[4] == 'top' then
  local comments = {}
  for _, id in ipairs(ids) do
    comments[id] = redis.call('LLEN', ns .. 'comments:' .. id)
  end
  table.sort(ids, function(a, b)
    if comments[a] ~= comments[b] then
      return comments[a] > comments[b]
    end
    return a > b
  end)
end
local out = {}
for _, id in ipairs(ids) do
  out[#out + 1] = counted_claim(ns .. 'claim:' .. id, ns .. 'comments:' .. id)
end
return out
