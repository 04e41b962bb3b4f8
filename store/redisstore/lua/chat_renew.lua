-- KEYS: active set. ARGV: namespace, lease until (ms), then the
-- conversation IDs.
-- agentchat.Store.RenewConversations: the lease of each that is running or
-- queued (in the active set) becomes the one given; returns those of them
-- whose cancel was requested (their cancel field, chat_cancel.lua).
local out = {}
for i = 3, #ARGV do
  if redis.call('SISMEMBER', KEYS[1], ARGV[i]) == 1 then
    local key = ARGV[1] .. 'conv:' .. ARGV[i]
    redis.call('HSET', key, 'lease_ms', ARGV[2])
    if redis.call('HEXISTS', key, 'cancel') == 1 then
      out[#out + 1] = ARGV[i]
    end
  end
end
return out
