-- KEYS: key hash, keys index, key names (name -> ID, revoked keys included).
-- ARGV: id, name, avatarUrl, scopes JSON, createdAt, revokedAt, hash (hex),
-- namespace, signing key address (empty: none).
if redis.call('EXISTS', KEYS[1]) == 1 then
  return fail('key_exists')
end
if redis.call('EXISTS', KEYS[3]) == 0 then
  -- Keys stored before names were indexed: index them once.
  for _, id in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
    local name = redis.call('HGET', ARGV[8] .. 'key:' .. id, 'name')
    if name then
      redis.call('HSETNX', KEYS[3], name, id)
    end
  end
end
if redis.call('HSETNX', KEYS[3], ARGV[2], ARGV[1]) == 0 then
  return fail('key_name_taken')
end
redis.call('HSET', KEYS[1], '_id', ARGV[1], 'name', ARGV[2], 'avatarUrl', ARGV[3],
  'scopes', ARGV[4], 'createdAt', ARGV[5], 'hash', ARGV[7])
if ARGV[6] ~= '0' then
  redis.call('HSET', KEYS[1], 'revokedAt', ARGV[6])
end
if ARGV[9] ~= '' then
  redis.call('HSET', KEYS[1], 'signingKeyAddress', ARGV[9])
end
redis.call('ZADD', KEYS[2], 0, ARGV[1])
return 1
