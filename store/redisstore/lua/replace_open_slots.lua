-- KEYS: claim hash, its slots list.
-- ARGV: namespace, claim ID, then (slot ID, role, createdAt) per new slot.
local ns, claim_id = ARGV[1], ARGV[2]
if redis.call('EXISTS', KEYS[1]) == 0 then
  return fail('claim_not_found')
end
local c = redis.call('HMGET', KEYS[1], 'hasDraft', 'domain')
local ready, domain = c[1] == '1', c[2]
local kept = {}
for _, id in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do
  local key = ns .. 'slot:' .. id
  local s = redis.call('HMGET', key, 'status', 'role')
  if s[1] == 'open' then
    dequeue(ns, id, s[2], domain)
    redis.call('DEL', key)
  else
    kept[#kept + 1] = id
  end
end
-- Rebuilt one ID at a time: unpack() of a long list would overflow Lua's
-- stack, and a claim's taken and done slots accumulate across reconfigures.
redis.call('DEL', KEYS[2])
for _, id in ipairs(kept) do
  redis.call('RPUSH', KEYS[2], id)
end
for i = 3, #ARGV, 3 do
  local id, role = ARGV[i], ARGV[i + 1]
  redis.call('HSET', ns .. 'slot:' .. id, '_id', id, 'claimId', claim_id,
    'role', role, 'status', 'open', 'createdAt', ARGV[i + 2])
  redis.call('RPUSH', KEYS[2], id)
  if ready then
    enqueue(ns, id, role, domain)
  end
end
return 1
