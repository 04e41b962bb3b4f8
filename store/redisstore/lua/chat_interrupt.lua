-- KEYS: active set. ARGV: namespace, updated (ms), updated (text).
-- agentchat.Store.InterruptRunning: marks interrupted every running or
-- queued conversation whose lease (lease_ms) ended at or before the given
-- time, or that has none, and returns their IDs; their cancel requests
-- (chat_cancel.lua) are cleared.
local at = tonumber(ARGV[2])
local out = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local key = ARGV[1] .. 'conv:' .. id
  local lease = tonumber(redis.call('HGET', key, 'lease_ms'))
  if not lease or lease <= at then
    redis.call('HSET', key, 'status', 'interrupted', 'updated_at', ARGV[3], 'updated_ms', ARGV[2])
    redis.call('HDEL', key, 'cancel')
    redis.call('ZADD', ARGV[1] .. 'convs', ARGV[2], id)
    redis.call('SREM', KEYS[1], id)
    out[#out + 1] = id
  end
end
return out
