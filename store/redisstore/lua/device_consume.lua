-- KEYS: device hash. ARGV: now.
-- slots.DeviceStore.ConsumeDeviceCode: an approved login not expired
-- becomes consumed; a pending one is returned as it is.
local d = redis.call('HMGET', KEYS[1], 'status', 'expiresAt')
if not d[1] then
  return fail('invalid_device_code')
end
if d[1] == 'consumed' then
  return fail('consumed_token')
end
if tonumber(ARGV[1]) >= tonumber(d[2]) then
  return fail('expired_token')
end
if d[1] == 'approved' then
  redis.call('HSET', KEYS[1], 'status', 'consumed', 'consumedAt', ARGV[1])
end
return redis.call('HGETALL', KEYS[1])
