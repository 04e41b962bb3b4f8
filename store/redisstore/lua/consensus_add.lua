-- KEYS: claim hash, its consensus list.
-- ARGV: the record's JSON.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return fail('claim_not_found')
end
redis.call('LPUSH', KEYS[2], ARGV[1])
return 1
