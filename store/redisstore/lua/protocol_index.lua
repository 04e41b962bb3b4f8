-- KEYS: claims index, the protocol names index, its marker.
-- ARGV: namespace, the page's exclusive lower bound ('-' to start), page
-- size.
-- Adds the protocols of a page of claims, oldest first, to the names
-- index, which claims stored before it lack (a name already there stays
-- one: pages read twice, or by two processes at once, change nothing);
-- returns the page's last ID to go on from, or sets the marker and
-- returns '' after the last page.
local ns = ARGV[1]
local ids = redis.call('ZRANGEBYLEX', KEYS[1], ARGV[2], '+', 'LIMIT', 0, tonumber(ARGV[3]))
for _, id in ipairs(ids) do
  local protocol = redis.call('HGET', ns .. 'claim:' .. id, 'protocol')
  if protocol and protocol ~= '' then
    redis.call('ZADD', KEYS[2], 0, protocol)
  end
end
return page_end(ids, tonumber(ARGV[3]), KEYS[3])
