-- KEYS: an index of message IDs (a sorted set by ID, or a list).
-- ARGV: the messages' key prefix (a message's key is it and the ID, built
-- in Go), 'zset' or 'list', then for a zset: max ('+' or '(<id>'), limit.
-- Returns the messages' JSON, newest first for a zset, in list order for a list.
local msg_prefix = ARGV[1]
local ids
if ARGV[2] == 'zset' then
  ids = redis.call('ZREVRANGEBYLEX', KEYS[1], ARGV[3], '-', 'LIMIT', 0, tonumber(ARGV[4]))
else
  ids = redis.call('LRANGE', KEYS[1], 0, -1)
end
local out = {}
for _, id in ipairs(ids) do
  table.insert(out, redis.call('GET', msg_prefix .. id))
end
return out
