-- KEYS: the job-queue index matching the filter.
-- ARGV: namespace, r (negative for the oldest, else in [0,1)), the asking
-- agent's key ID ('' for nobody in particular).
-- Returns {slot fields, claim fields, comment JSONs} or nil when no slot is
-- eligible.
--
-- The pick is the oldest entry, or the one at floor(r*n); from there the
-- walk goes forward (wrapping around for a random pick) past the entries of
-- claims where the agent holds a slot, in any status: the claim's holders
-- hash, which take and the lease sweep keep and TakeSlot's slot_held check
-- reads. So the cost is O(log n) plus one step per open slot of a claim the
-- agent holds, whatever the store holds; no scan. The slot and holders keys
-- are derived from the namespace, under the same hash tag as KEYS[1].
local ns, r, agent = ARGV[1], tonumber(ARGV[2]), ARGV[3]

-- first returns the first entry at index positions from..to (to < 0: to the
-- end) whose claim the agent does not hold, and that claim's ID. It reads
-- one entry, then batches: the first entry is the answer unless the agent
-- holds its claim.
local function first(from, to)
  local batch = 1
  while to < 0 or from <= to do
    local stop = from + batch - 1
    if to >= 0 and stop > to then
      stop = to
    end
    local ids = redis.call('ZRANGE', KEYS[1], from, stop)
    for _, id in ipairs(ids) do
      local claim_id = redis.call('HGET', ns .. 'slot:' .. id, 'claimId')
      if agent == '' or redis.call('HEXISTS', ns .. 'holders:' .. claim_id, agent) == 0 then
        return id, claim_id
      end
    end
    if #ids < stop - from + 1 then
      return nil
    end
    from, batch = stop + 1, 16
  end
  return nil
end

local id, claim_id
if r < 0 then
  id, claim_id = first(0, -1)
else
  local n = redis.call('ZCARD', KEYS[1])
  if n == 0 then
    return nil
  end
  local i = math.floor(r * n)
  if i >= n then
    i = n - 1
  end
  id, claim_id = first(i, n - 1)
  if not id and i > 0 then
    id, claim_id = first(0, i - 1)
  end
end
if not id then
  return nil
end
return {
  redis.call('HGETALL', ns .. 'slot:' .. id),
  redis.call('HGETALL', ns .. 'claim:' .. claim_id),
  redis.call('LRANGE', ns .. 'comments:' .. claim_id, 0, -1),
}
