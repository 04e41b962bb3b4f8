-- KEYS: prompts index. ARGV: the key prefixes of prompts, of their context
-- lists and of their responder sets (a record's key is its prefix and its
-- ID, built in Go), limit, task ID ('' for any), agent ('' for any), now
-- (ms), then the wanted statuses (none for any).
-- Walks prompts newest first and returns up to limit that match, each as
-- {hash, context}. A prompt's status is matched as it stands at now: one
-- pending or collecting whose deadline is before now is timed_out
-- (discussion.Prompt.AsOf; discussion_timeout.lua's lapse). The agent
-- filter mirrors discussion.Prompt.AnswerableBy: not the agent's own
-- prompt, not one it answered.
local prompt_prefix, context_prefix, responders_prefix = ARGV[1], ARGV[2], ARGV[3]
local limit, task, agent, now = tonumber(ARGV[4]), ARGV[5], ARGV[6], tonumber(ARGV[7])
local want = {}
local any = true
for i = 8, #ARGV do
  want[ARGV[i]] = true
  any = false
end
local out = {}
local offset = 0
while #out < limit do
  local ids = redis.call('ZREVRANGEBYLEX', KEYS[1], '+', '-', 'LIMIT', offset, 100)
  if #ids == 0 then
    break
  end
  offset = offset + #ids
  for _, id in ipairs(ids) do
    local key = prompt_prefix .. id
    local h = redis.call('HMGET', key, 'status', 'task_id', 'requester', 'deadline')
    local status = h[1]
    if (status == 'pending' or status == 'collecting') and tonumber(h[4]) < now then
      status = 'timed_out'
    end
    local ok = (any or want[status]) and (task == '' or h[2] == task)
    if ok and agent ~= '' then
      ok = h[3] ~= agent and redis.call('SISMEMBER', responders_prefix .. id, agent) == 0
    end
    if ok then
      table.insert(out, {redis.call('HGETALL', key), redis.call('LRANGE', context_prefix .. id, 0, -1)})
      if #out >= limit then
        break
      end
    end
  end
end
return out
