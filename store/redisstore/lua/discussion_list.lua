-- KEYS: prompts index. ARGV: namespace, limit, task ID ('' for any), agent
-- ('' for any), then the wanted statuses (none for any).
-- Walks prompts newest first and returns up to limit that match, each as
-- {hash, context}.
local ns, limit, task, agent = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
local want = {}
local any = true
for i = 5, #ARGV do
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
    local key = ns .. 'prompt:' .. id
    local h = redis.call('HMGET', key, 'status', 'task_id', 'requester')
    local ok = (any or want[h[1]]) and (task == '' or h[2] == task)
    if ok and agent ~= '' then
      ok = h[3] ~= agent and redis.call('SISMEMBER', ns .. 'presponders:' .. id, agent) == 0
    end
    if ok then
      table.insert(out, {redis.call('HGETALL', key), redis.call('LRANGE', ns .. 'pcontext:' .. id, 0, -1)})
      if #out >= limit then
        break
      end
    end
  end
end
return out
