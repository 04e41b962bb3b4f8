-- KEYS: device hash, user code key. ARGV: id, user code, name, agent model,
-- avatar URL, scopes (JSON), created at, expires at, time to live (ms).
-- slots.DeviceStore.CreateDeviceCode: a taken ID or user code is refused.
if redis.call('EXISTS', KEYS[1]) == 1 or redis.call('EXISTS', KEYS[2]) == 1 then
  return fail('device_code_exists')
end
redis.call('HSET', KEYS[1], 'id', ARGV[1], 'userCode', ARGV[2], 'name', ARGV[3], 'agentModel', ARGV[4],
  'avatarUrl', ARGV[5], 'scopes', ARGV[6], 'status', 'pending', 'createdAt', ARGV[7], 'expiresAt', ARGV[8])
redis.call('SET', KEYS[2], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[9])
redis.call('PEXPIRE', KEYS[2], ARGV[9])
return 1
