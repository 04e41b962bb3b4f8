-- KEYS: slot hash, claim hash, claim's holders hash, leases index.
-- ARGV: namespace, claim ID, slot ID, key ID, agent name, avatar URL, now,
-- lease expiry ("0" for none).
local ns, claim_id, slot_id, key_id = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local now, lease = ARGV[7], ARGV[8]
local s = redis.call('HMGET', KEYS[1], 'claimId', 'status', 'apiKeyId', 'leaseExpiresAt', 'role')
-- A slot is only found under its own claim.
if s[1] ~= claim_id then
  return fail('slot_not_found')
end
local status, holder = s[2], s[3]
local expired = lapsed(status, s[4], tonumber(now))
if status ~= 'open' and not expired then
  return fail('slot_taken')
end
local held = redis.call('HGET', KEYS[3], key_id)
if held and held ~= slot_id then
  return fail('slot_held')
end
if expired and holder and redis.call('HGET', KEYS[3], holder) == slot_id then
  redis.call('HDEL', KEYS[3], holder)
end
assign_slot(ns, slot_id, KEYS[3], key_id, ARGV[5], ARGV[6], now, lease, s[4] ~= false)
-- A lapsed slot left the queue when it was first taken.
if status == 'open' then
  dequeue(ns, slot_id, s[5], redis.call('HGET', KEYS[2], 'domain'))
end
return read_slot(KEYS[1])
