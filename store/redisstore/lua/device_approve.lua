-- KEYS: user code key. ARGV: namespace, approver, now.
-- slots.DeviceStore.ApproveDeviceCode: a pending login not expired
-- (slots.DeviceCode.Expired) becomes approved.
local id = redis.call('GET', KEYS[1])
if not id then
  return fail('invalid_device_code')
end
local key = ARGV[1] .. 'device:' .. id
local d = redis.call('HMGET', key, 'status', 'expiresAt')
if not d[1] then
  return fail('invalid_device_code')
end
if d[1] ~= 'consumed' and tonumber(ARGV[3]) >= tonumber(d[2]) then
  return fail('expired_token')
end
if d[1] ~= 'pending' then
  return fail('device_code_used')
end
redis.call('HSET', key, 'status', 'approved', 'approvedBy', ARGV[2], 'approvedAt', ARGV[3])
return redis.call('HGETALL', key)
