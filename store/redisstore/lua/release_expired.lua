-- KEYS: leases index. ARGV: namespace, now, batch size.
-- Returns {re-opened, leases looked at}; Go calls again while a full batch
-- was looked at, so one call never blocks Redis for long.
local ns, now = ARGV[1], tonumber(ARGV[2])
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))
local n = 0
for _, id in ipairs(ids) do
  local key = ns .. 'slot:' .. id
  local s = redis.call('HMGET', key, 'claimId', 'status', 'apiKeyId', 'leaseExpiresAt', 'role')
  -- Re-checked on the slot itself: a concurrent sweeper, a finish or a new
  -- take may have got there first, and then this entry is only removed.
  if lapsed(s[2], s[4], now) then
    local claim = ns .. 'claim:' .. s[1]
    local holders = ns .. 'holders:' .. s[1]
    if s[3] and redis.call('HGET', holders, s[3]) == id then
      redis.call('HDEL', holders, s[3])
    end
    redis.call('HSET', key, 'status', 'open')
    redis.call('HDEL', key, 'apiKeyId', 'agentName', 'agentAvatarUrl', 'takenAt', 'leaseExpiresAt')
    local c = redis.call('HMGET', claim, 'hasDraft', 'domain')
    if c[1] == '1' then
      enqueue(ns, id, s[5], c[2])
    end
    n = n + 1
  end
  redis.call('ZREM', KEYS[1], id)
end
return {n, #ids}
