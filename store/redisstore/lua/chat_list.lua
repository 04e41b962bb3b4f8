-- KEYS: conversation hash, its message list from before store-wide IDs, its
-- messages (sorted set), the store's message counter. ARGV: the ID to list
-- after. Returns the members ("<ID> <message JSON>") with higher IDs, in
-- order.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return fail('conversation_not_found')
end
chat_upgrade(KEYS[2], KEYS[3], KEYS[4])
return redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. ARGV[1], '+inf')
