-- Mirrors discussion.Prompt.TimeOut, over the prompts the deadlines index
-- names as due: a prompt still pending or collecting whose deadline is
-- before now becomes timed_out, resolved at its deadline (deadline_at,
-- not now). storetest's PromptRules pins this copy to the Go method.
-- KEYS: deadlines index. ARGV: the prompts' key prefix (a prompt's key is
-- it and the ID, built in Go), now (ms), batch size.
-- Times out at most a batch at a time and returns the IDs. A prompt
-- leaves the index as it is timed out (or resolved or cancelled), so it is
-- timed out once.
local prompt_prefix = ARGV[1]
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))
local out = {}
for _, id in ipairs(ids) do
  local key = prompt_prefix .. id
  local h = redis.call('HMGET', key, 'status', 'deadline_at')
  if h[1] == 'pending' or h[1] == 'collecting' then
    redis.call('HSET', key, 'status', 'timed_out', 'resolved_at', h[2])
    table.insert(out, id)
  end
  redis.call('ZREM', KEYS[1], id)
end
return out
