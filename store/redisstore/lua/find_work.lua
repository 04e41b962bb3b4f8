-- KEYS: the work index asked (w|<role>|<layer>|<domain>), and the
-- consensus slots' index of the same layer and domain.
-- ARGV: the most members to answer, the lowest member ('-', or an
-- exclusive bound '(...' past a page), "1" to pass over the members of the
-- consensus index (prism.PhaseWork).
-- prism.Store.FindWork: the oldest members from the bound on, read in
-- batches of that size until enough are found or the index ends.
local limit, from, skip = tonumber(ARGV[1]), ARGV[2], ARGV[3] == '1'
local out = {}
while #out < limit do
  local batch = redis.call('ZRANGEBYLEX', KEYS[1], from, '+', 'LIMIT', 0, limit)
  for _, m in ipairs(batch) do
    if not skip or not redis.call('ZSCORE', KEYS[2], m) then
      out[#out + 1] = m
      if #out == limit then
        return out
      end
    end
  end
  if #batch < limit then
    break
  end
  from = '(' .. batch[#batch]
end
return out
