-- KEYS: conversation hash, its message list, conversations index, active
-- set. ARGV: conversation ID.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return fail('conversation_not_found')
end
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('SREM', KEYS[4], ARGV[1])
return 1
