-- KEYS: active set. ARGV: namespace, updated (ms), updated (text).
-- Marks every running or queued conversation interrupted.
local ids = redis.call('SMEMBERS', KEYS[1])
for _, id in ipairs(ids) do
  redis.call('HSET', ARGV[1] .. 'conv:' .. id, 'status', 'interrupted', 'updated_at', ARGV[3], 'updated_ms', ARGV[2])
  redis.call('ZADD', ARGV[1] .. 'convs', ARGV[2], id)
end
redis.call('DEL', KEYS[1])
return #ids
