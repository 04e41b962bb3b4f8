-- KEYS: key hash. ARGV: revocation time.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return fail('key_not_found')
end
-- HSETNX keeps the first revocation time: revoking twice changes nothing.
redis.call('HSETNX', KEYS[1], 'revokedAt', ARGV[1])
return 1
