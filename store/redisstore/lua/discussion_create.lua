-- KEYS: prompt hash, prompts index, deadlines index, message key, messages index.
-- ARGV: prompt ID, then the prompt's fields as name/value pairs up to the
-- marker '--', then deadline (ms), message ID, message JSON.
if redis.call('EXISTS', KEYS[1]) == 1 then
  return fail('prompt_exists')
end
local i = 2
while ARGV[i] ~= '--' do
  redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
  i = i + 2
end
local deadline, msg_id, msg = ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
redis.call('ZADD', KEYS[2], 0, ARGV[1])
redis.call('ZADD', KEYS[3], deadline, ARGV[1])
redis.call('SET', KEYS[4], msg)
redis.call('ZADD', KEYS[5], 0, msg_id)
return 1
