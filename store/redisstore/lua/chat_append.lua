-- KEYS: conversation hash, its message list. ARGV: message JSON (without
-- its ID). The ID is the message's position in the list, from 1: messages
-- are only ever appended, so IDs rise by one without gaps.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return fail('conversation_not_found')
end
return redis.call('RPUSH', KEYS[2], ARGV[1])
