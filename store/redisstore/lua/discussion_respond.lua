-- Mirrors discussion.Prompt.Respond, which memstore and pgstore call: the
-- same checks in the same order (own prompt; not pending or collecting, or
-- the deadline before the entry's time; already answered), then the
-- entry appended, and the one reaching the required count resolves the
-- prompt at the entry's time. Nothing is written on error. storetest's
-- PromptRules walks every branch of the Go method on every backend, so
-- this copy cannot drift from it unnoticed.
-- KEYS: prompt hash, its context list, its responders set, its response-ID
-- list, the new message's key, messages index, deadlines index.
-- ARGV: prompt ID, agent, entry JSON, entry time (ms), entry time (text),
-- message ID, message JSON.
local h = redis.call('HMGET', KEYS[1], 'requester', 'status', 'deadline', 'required')
if not h[2] then
  return fail('prompt_not_found')
end
local agent = ARGV[2]
if agent == h[1] then
  return fail('own_prompt')
end
if (h[2] ~= 'pending' and h[2] ~= 'collecting') or tonumber(ARGV[4]) > tonumber(h[3]) then
  return fail('prompt_closed')
end
if redis.call('SISMEMBER', KEYS[3], agent) == 1 then
  return fail('already_responded')
end
redis.call('SADD', KEYS[3], agent)
local n = redis.call('RPUSH', KEYS[2], ARGV[3])
redis.call('RPUSH', KEYS[4], ARGV[6])
redis.call('SET', KEYS[5], ARGV[7])
redis.call('ZADD', KEYS[6], 0, ARGV[6])
if n >= tonumber(h[4]) then
  redis.call('HSET', KEYS[1], 'status', 'resolved', 'resolved_at', ARGV[5])
  redis.call('ZREM', KEYS[7], ARGV[1])
end
return {redis.call('HGETALL', KEYS[1]), redis.call('LRANGE', KEYS[2], 0, -1)}
