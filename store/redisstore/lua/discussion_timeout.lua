-- KEYS: deadlines index. ARGV: namespace, now (ms), batch size.
-- Times out open prompts whose deadline is at or before now, at most a
-- batch at a time, and returns their IDs. A prompt leaves the index as it
-- is timed out (or resolved or cancelled), so it is timed out once.
local ns = ARGV[1]
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))
local out = {}
for _, id in ipairs(ids) do
  local key = ns .. 'prompt:' .. id
  local h = redis.call('HMGET', key, 'status', 'deadline_at')
  if h[1] == 'pending' or h[1] == 'collecting' then
    redis.call('HSET', key, 'status', 'timed_out', 'resolved_at', h[2])
    table.insert(out, id)
  end
  redis.call('ZREM', KEYS[1], id)
end
return out
