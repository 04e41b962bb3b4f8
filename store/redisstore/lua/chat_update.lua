-- KEYS: conversation hash, conversations index (by update time), active set.
-- ARGV: conversation ID, status, session ID ('' keeps it), title ('' keeps
-- it), updated (ms), updated (text), then 'create' and the created fields,
-- created (text) and user (or 'update' and two empty strings), then the
-- lease until (ms; '' keeps it).
-- A status other than running or queued clears the cancel request
-- (chat_cancel.lua); running or queued keeps it.
if ARGV[7] == 'create' then
  redis.call('HSET', KEYS[1], 'id', ARGV[1], 'title', ARGV[4], 'session_id', ARGV[3], 'created_at', ARGV[8], 'user', ARGV[9])
elseif redis.call('EXISTS', KEYS[1]) == 0 then
  return fail('conversation_not_found')
end
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'updated_at', ARGV[6], 'updated_ms', ARGV[5])
if ARGV[3] ~= '' then
  redis.call('HSET', KEYS[1], 'session_id', ARGV[3])
end
if ARGV[4] ~= '' then
  redis.call('HSET', KEYS[1], 'title', ARGV[4])
end
if ARGV[10] ~= '' then
  redis.call('HSET', KEYS[1], 'lease_ms', ARGV[10])
end
redis.call('ZADD', KEYS[2], ARGV[5], ARGV[1])
if ARGV[2] == 'running' or ARGV[2] == 'queued' then
  redis.call('SADD', KEYS[3], ARGV[1])
else
  redis.call('SREM', KEYS[3], ARGV[1])
  redis.call('HDEL', KEYS[1], 'cancel')
end
return 1
