-- KEYS: slot hash, leases index, balances hash.
-- ARGV: claim ID, slot ID, key ID, now, credit.
local claim_id, slot_id, key_id, now = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local s = redis.call('HMGET', KEYS[1], 'claimId', 'status', 'apiKeyId', 'leaseExpiresAt')
-- The checks run in the contract's order, the same as memstore's.
if s[1] ~= claim_id then
  return fail('slot_not_found')
end
if s[2] == 'open' then
  return fail('slot_not_taken')
end
if s[3] ~= key_id then
  return fail('not_slot_owner')
end
if s[2] ~= 'taken' or lapsed(s[2], s[4], tonumber(now)) then
  return fail('slot_not_taken')
end
redis.call('HSET', KEYS[1], 'status', 'done', 'doneAt', now)
redis.call('ZREM', KEYS[2], slot_id)
-- The credit is in the same script as the transition, so a slot pays once.
redis.call('HINCRBY', KEYS[3], key_id, ARGV[5])
return redis.call('HGETALL', KEYS[1])
