-- KEYS: game hash, games index, deadlines index, feed list, rounds list.
-- ARGV: the prefix of the status indexes (the index of status st is it
-- and st, built in Go), game ID, version, status, deadline (ms, '' for none),
-- doc, created (ms), create ('1' to create, '0' to update), the number F
-- of feed items appended, then F feed items and the resolved rounds
-- appended (JSON each): arena.Store.UpdateGame's Appended, pushed onto
-- the game's lists in the same step as the save.
-- Create stores a game whose ID is free; update saves an existing game
-- only if the stored one is the version before (compare-and-set), and
-- otherwise returns the stored document, so the caller can apply its
-- change again without reading. The status index moves with the status, so listings by status
-- read one sorted set. Returns 1 when saved.
local by_status, id, version = ARGV[1], ARGV[2], tonumber(ARGV[3])
local cur = redis.call('HMGET', KEYS[1], 'version', 'status')
if ARGV[8] == '1' then
  if cur[1] then
    return fail('game_exists')
  end
  redis.call('ZADD', KEYS[2], 0, id)
else
  if not cur[1] then
    return fail('game_not_found')
  end
  if tonumber(cur[1]) ~= version - 1 then
    return redis.call('HGET', KEYS[1], 'doc')
  end
  redis.call('ZREM', by_status .. cur[2], id)
end
redis.call('HSET', KEYS[1], 'version', ARGV[3], 'status', ARGV[4], 'doc', ARGV[6], 'created', ARGV[7])
redis.call('ZADD', by_status .. ARGV[4], 0, id)
if ARGV[5] == '' then
  redis.call('ZREM', KEYS[3], id)
else
  redis.call('ZADD', KEYS[3], ARGV[5], id)
end
push_game_logs(KEYS[4], KEYS[5], 9)
return 1
