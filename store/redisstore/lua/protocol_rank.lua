-- KEYS: the protocol names index, the ranking's marker
-- (claims:protocols:ranked).
-- ARGV: namespace, the page's exclusive lower bound ('-' to start), page
-- size.
-- Ranks a page of the names index (rank_protocol), which a store older
-- than the ranking lacks (ranking a name again changes nothing: pages read
-- twice, or by two processes at once, are harmless); returns the page's
-- last name to go on from, or sets the marker and returns '' after the
-- last page.
local ns = ARGV[1]
local names = redis.call('ZRANGEBYLEX', KEYS[1], ARGV[2], '+', 'LIMIT', 0, tonumber(ARGV[3]))
for _, name in ipairs(names) do
  rank_protocol(ns, name)
end
return page_end(names, tonumber(ARGV[3]), KEYS[2])
