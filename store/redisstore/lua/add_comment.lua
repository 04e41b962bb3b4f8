-- KEYS: claim hash, its comments list, its slots list.
-- ARGV: namespace, comment JSON, "1" when the comment is a draft, its
-- createdAt, and for a reply how its parent's JSON begins ('{"_id":' and
-- the parent's ID as JSON; '' for none).
local ns = ARGV[1]
if redis.call('EXISTS', KEYS[1]) == 0 then
  return fail('claim_not_found')
end
local parent = ARGV[5]
if parent ~= '' then
  local found = false
  for _, c in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do
    if string.sub(c, 1, #parent) == parent then
      found = true
      break
    end
  end
  if not found then
    return fail('parent_comment_not_found')
  end
end
redis.call('RPUSH', KEYS[2], ARGV[2])
-- The claim's job text gains the comment too; a claim stored before it
-- had one gets it now, and loses the older fields.
local job = redis.call('HGET', KEYS[1], 'jobv')
if job then
  job = job .. job_item(ARGV[2])
else
  job = job_text(read_claim(KEYS[1]), redis.call('LRANGE', KEYS[2], 0, -1))
  redis.call('HDEL', KEYS[1], 'job', 'jobtext')
end
redis.call('HSET', KEYS[1], 'jobv', job)
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
