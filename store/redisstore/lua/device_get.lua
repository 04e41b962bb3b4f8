-- KEYS: user code key. ARGV: namespace.
-- slots.DeviceStore.DeviceCodeByUserCode.
local id = redis.call('GET', KEYS[1])
if not id then
  return fail('invalid_device_code')
end
return redis.call('HGETALL', ARGV[1] .. 'device:' .. id)
