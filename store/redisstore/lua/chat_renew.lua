-- KEYS: active set. ARGV: namespace, lease until (ms), then the
-- conversation IDs.
-- agentchat.Store.RenewConversations: the lease of each that is running or
-- queued (in the active set) becomes the one given.
for i = 3, #ARGV do
  if redis.call('SISMEMBER', KEYS[1], ARGV[i]) == 1 then
    redis.call('HSET', ARGV[1] .. 'conv:' .. ARGV[i], 'lease_ms', ARGV[2])
  end
end
return 1
