-- KEYS: conversation hash. ARGV: none.
-- agentchat.Store.RequestCancel: marks a running or queued conversation as
-- asked to stop (its cancel field, which chat_renew.lua reports and
-- chat_update.lua and chat_interrupt.lua clear once it leaves running and
-- queued); any other status fails not_running, and nothing is marked.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return fail('conversation_not_found')
end
local status = redis.call('HGET', KEYS[1], 'status')
if status ~= 'running' and status ~= 'queued' then
  return fail('not_running')
end
redis.call('HSET', KEYS[1], 'cancel', '1')
return 1
