-- KEYS: conversation hash, its message list from before store-wide IDs, its
-- messages, conversations index, active set. ARGV: conversation ID.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return fail('conversation_not_found')
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('SREM', KEYS[5], ARGV[1])
return 1
