-- KEYS: the job-queue index matching the filter.
-- ARGV: namespace, r (negative for the oldest, else in [0,1)).
-- Returns {slot fields, claim fields, comment JSONs} or nil when the index is
-- empty. O(log n) in the index size: no scan, whatever the store holds.
local ns, r = ARGV[1], tonumber(ARGV[2])
local ids
if r < 0 then
  ids = redis.call('ZRANGE', KEYS[1], 0, 0)
else
  local n = redis.call('ZCARD', KEYS[1])
  if n == 0 then
    return nil
  end
  local i = math.floor(r * n)
  if i >= n then
    i = n - 1
  end
  ids = redis.call('ZRANGE', KEYS[1], i, i)
end
local id = ids[1]
if not id then
  return nil
end
local slot = ns .. 'slot:' .. id
local claim_id = redis.call('HGET', slot, 'claimId')
return {
  redis.call('HGETALL', slot),
  redis.call('HGETALL', ns .. 'claim:' .. claim_id),
  redis.call('LRANGE', ns .. 'comments:' .. claim_id, 0, -1),
}
