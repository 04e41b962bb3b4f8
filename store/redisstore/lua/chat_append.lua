-- KEYS: conversation hash, its message list from before store-wide IDs, its
-- messages (sorted set), the store's message counter. ARGV: message JSON
-- (without its ID). The ID is the counter's next value, so IDs are unique
-- across every conversation of the store and rise in the order messages
-- are stored. Returns the ID.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return fail('conversation_not_found')
end
chat_upgrade(KEYS[2], KEYS[3], KEYS[4])
local id = redis.call('INCR', KEYS[4])
redis.call('ZADD', KEYS[3], id, id .. ' ' .. ARGV[1])
return id
