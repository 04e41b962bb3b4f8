-- KEYS: key hash, keys index.
-- ARGV: id, name, avatarUrl, scopes JSON, createdAt, revokedAt, hash (hex),
-- signing key address (empty: none).
if redis.call('EXISTS', KEYS[1]) == 1 then
  return fail('key_exists')
end
redis.call('HSET', KEYS[1], '_id', ARGV[1], 'name', ARGV[2], 'avatarUrl', ARGV[3],
  'scopes', ARGV[4], 'createdAt', ARGV[5], 'hash', ARGV[7])
if ARGV[6] ~= '0' then
  redis.call('HSET', KEYS[1], 'revokedAt', ARGV[6])
end
if ARGV[8] ~= '' then
  redis.call('HSET', KEYS[1], 'signingKeyAddress', ARGV[8])
end
redis.call('ZADD', KEYS[2], 0, ARGV[1])
return 1
