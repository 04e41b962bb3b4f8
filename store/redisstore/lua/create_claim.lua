-- KEYS: claim hash, claims index, the claim domain's claims index.
-- ARGV: id, title, body, domain, createdAt, sources (a JSON array).
if redis.call('EXISTS', KEYS[1]) == 1 then
  return fail('claim_exists')
end
redis.call('HSET', KEYS[1], '_id', ARGV[1], 'title', ARGV[2], 'body', ARGV[3],
  'domain', ARGV[4], 'createdAt', ARGV[5], 'sources', ARGV[6])
redis.call('ZADD', KEYS[2], 0, ARGV[1])
redis.call('ZADD', KEYS[3], 0, ARGV[1])
return 1
