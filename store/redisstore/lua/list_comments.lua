-- KEYS: claim hash, its comments list.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return fail('claim_not_found')
end
return redis.call('LRANGE', KEYS[2], 0, -1)
