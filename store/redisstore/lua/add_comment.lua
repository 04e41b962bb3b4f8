-- KEYS: claim hash, its comments list, its slots list, its comment IDs set.
-- ARGV: namespace, comment JSON, "1" when the comment is a draft, its
-- createdAt, the ID of the comment it replies to ('' for none), its ID.
local ns = ARGV[1]
if redis.call('EXISTS', KEYS[1]) == 0 then
  return fail('claim_not_found')
end
local before = redis.call('LLEN', KEYS[2])
local counted = redis.call('HEXISTS', KEYS[1], 'commentCount') == 1
-- A claim commented on before its comment IDs were kept gets them now,
-- once, from its list.
if before > 0 and redis.call('EXISTS', KEYS[4]) == 0 then
  for _, c in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do
    redis.call('SADD', KEYS[4], cjson.decode(c)['_id'])
  end
end
if ARGV[5] ~= '' and redis.call('SISMEMBER', KEYS[4], ARGV[5]) == 0 then
  return fail('parent_comment_not_found')
end
redis.call('RPUSH', KEYS[2], ARGV[2])
redis.call('SADD', KEYS[4], ARGV[6])
redis.call('HSET', KEYS[1], 'commentCount', before + 1)
-- The claim's job text carries its oldest comments: this one too while
-- they are fewer than a job carries, so that past them a comment costs
-- the same however many came before. A claim stored before it had one, or
-- before it was bounded (no count, more comments than a job carries), gets
-- it now, and loses the older fields.
if redis.call('HEXISTS', KEYS[1], 'jobv') == 0 or (not counted and before > JOB_COMMENTS) then
  redis.call('HSET', KEYS[1], 'jobv', job_text(read_claim(KEYS[1]), redis.call('LRANGE', KEYS[2], 0, JOB_COMMENTS - 1)))
  redis.call('HDEL', KEYS[1], 'job', 'jobtext')
elseif before < JOB_COMMENTS then
  redis.call('HSET', KEYS[1], 'jobv', redis.call('HGET', KEYS[1], 'jobv') .. job_item(ARGV[2]))
end
touch_claim(KEYS[1], ARGV[4])
-- The first draft makes the claim ready: its open slots join the job queue
-- in this same step, so no agent sees a ready claim without its slots.
if ARGV[3] == '1' and redis.call('HGET', KEYS[1], 'hasDraft') ~= '1' then
  redis.call('HSET', KEYS[1], 'hasDraft', '1')
  local domain = redis.call('HGET', KEYS[1], 'domain')
  for _, id in ipairs(redis.call('LRANGE', KEYS[3], 0, -1)) do
    local s = redis.call('HMGET', ns .. 'slot:' .. id, 'status', 'role')
    if s[1] == 'open' then
      enqueue(ns, id, s[2], domain)
    end
  end
end
return 1
