-- KEYS: key hash. ARGV: signing key address.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return fail('key_not_found')
end
redis.call('HSET', KEYS[1], 'signingKeyAddress', ARGV[1])
return 1
