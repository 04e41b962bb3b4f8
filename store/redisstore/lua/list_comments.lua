-- KEYS: claim hash, its comments list. ARGV: how many (0 or more), and 1
-- for the newest, 0 for the oldest. Answers them oldest first.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return fail('claim_not_found')
end
local n = tonumber(ARGV[1])
if n == 0 then
  return {}
end
if ARGV[2] == '1' then
  return redis.call('LRANGE', KEYS[2], -n, -1)
end
return redis.call('LRANGE', KEYS[2], 0, n - 1)
