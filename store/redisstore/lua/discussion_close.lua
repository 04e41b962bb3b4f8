-- Mirrors discussion.Prompt.Close, which memstore and pgstore call: a
-- prompt still pending or collecting whose deadline is not before now takes the
-- new status, resolved at now; any other is prompt_closed, unchanged.
-- storetest's PromptRules pins this copy to the Go method.
-- KEYS: prompt hash, its context list, deadlines index.
-- ARGV: prompt ID, new status, now (ms), now (text).
local h = redis.call('HMGET', KEYS[1], 'status', 'deadline')
if not h[1] then
  return fail('prompt_not_found')
end
if (h[1] ~= 'pending' and h[1] ~= 'collecting') or tonumber(ARGV[3]) > tonumber(h[2]) then
  return fail('prompt_closed')
end
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'resolved_at', ARGV[4])
redis.call('ZREM', KEYS[3], ARGV[1])
return {redis.call('HGETALL', KEYS[1]), redis.call('LRANGE', KEYS[2], 0, -1)}
