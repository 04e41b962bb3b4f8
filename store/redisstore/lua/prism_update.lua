-- KEYS: pipeline hash, claim hash, the claim's role-slot list, balances.
-- ARGV: namespace, claim ID, new version, doc, next lease, domain, new
-- claim domain ('' for none), number of credits, the credits as (key,
-- amount) pairs, then the open slots as (id, role, layer name) triples.
-- Saves the pipeline if its stored version is the one before, with every
-- effect, and returns 1; otherwise changes nothing and returns the stored
-- document, so the caller can apply its change again without reading.
local ns, claim = ARGV[1], ARGV[2]
local cur = redis.call('HMGET', KEYS[1], 'version', 'doc')
if not cur[1] then
  return fail('pipeline_not_found')
end
if tonumber(cur[1]) ~= tonumber(ARGV[3]) - 1 then
  return cur[2]
end
redis.call('HSET', KEYS[1], 'version', ARGV[3], 'doc', ARGV[4])
local ncredits = tonumber(ARGV[8])
for i = 9, 8 + 2 * ncredits, 2 do
  redis.call('HINCRBY', KEYS[4], ARGV[i], ARGV[i + 1])
end
set_work(ns, claim, ARGV[6], {unpack(ARGV, 9 + 2 * ncredits)})
set_lease(ns, claim, ARGV[5])
local new_domain = ARGV[7]
if new_domain ~= '' then
  local c = redis.call('HMGET', KEYS[2], 'domain', 'hasDraft', 'job')
  redis.call('HSET', KEYS[2], 'domain', new_domain)
  -- The claim's job text, which a take answers, carries the domain too; a
  -- claim stored before it had one gets it with its next comment.
  if c[3] and c[1] ~= new_domain then
    redis.call('HSET', KEYS[2], 'job', job_domain(c[3], new_domain))
  end
  -- The claim moves to the new domain's claims index (domain_claims_key).
  if c[1] ~= new_domain then
    if c[1] then
      redis.call('ZREM', ns .. 'claims:domain:' .. c[1], claim)
    end
    redis.call('ZADD', ns .. 'claims:domain:' .. new_domain, 0, claim)
  end
  -- The claim's open role slots move to the new domain's queue indexes.
  if c[2] == '1' and c[1] ~= new_domain then
    for _, id in ipairs(redis.call('LRANGE', KEYS[3], 0, -1)) do
      local s = redis.call('HMGET', ns .. 'slot:' .. id, 'status', 'role')
      if s[1] == 'open' then
        dequeue(ns, id, s[2], c[1])
        enqueue(ns, id, s[2], new_domain)
      end
    end
  end
end
return 1
