-- KEYS: device hash, then the new key's hash, the keys index and the key
-- names (create_key.lua's). ARGV: now, the key's ID, its hash (hex), the
-- namespace.
-- slots.DeviceStore.ConsumeDeviceCode: an approved login not expired
-- becomes consumed and its key is stored under its name, avatar URL and
-- scopes, or neither happens; a pending one is returned as it is.
local d = redis.call('HMGET', KEYS[1], 'status', 'expiresAt', 'name', 'avatarUrl', 'scopes')
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
  local code = put_key(KEYS[2], KEYS[3], KEYS[4], ARGV[4], ARGV[2], d[3], d[4] or '', d[5], ARGV[1], '0', ARGV[3], '')
  if code then
    return fail(code)
  end
  redis.call('HSET', KEYS[1], 'status', 'consumed', 'consumedAt', ARGV[1])
end
return redis.call('HGETALL', KEYS[1])
