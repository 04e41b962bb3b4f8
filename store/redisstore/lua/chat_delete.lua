-- KEYS: conversation hash, its message list from before store-wide IDs, its
-- messages, conversations index, active set. ARGV: conversation ID.
-- A conversation whose agent is running or queued is not deleted
-- (agentchat.Store.DeleteConversation).
if redis.call('EXISTS', KEYS[1]) == 0 then
  return fail('conversation_not_found')
end
local status = redis.call('HGET', KEYS[1], 'status')
if status == 'running' or status == 'queued' then
  return fail('conversation_busy')
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('SREM', KEYS[5], ARGV[1])
return 1
