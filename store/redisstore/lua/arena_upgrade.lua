-- KEYS: game hash, feed list, rounds list.
-- ARGV: the game's document as read (with its feed and rounds inside, as
-- games were stored before arena.Store kept them in logs), the document
-- without its feed, the number F of feed items, then F feed items and the
-- resolved rounds (JSON each). If the stored document is still the one
-- read and the logs are empty, the items and rounds go to the logs and the
-- document loses its feed, so that Seq n is at index n-1 (what FeedAfter
-- reads) before any save appends. Returns 1 when upgraded.
if redis.call('HGET', KEYS[1], 'doc') ~= ARGV[1] or redis.call('LLEN', KEYS[2]) > 0 or redis.call('LLEN', KEYS[3]) > 0 then
  return 0
end
push_game_logs(KEYS[2], KEYS[3], 3)
redis.call('HSET', KEYS[1], 'doc', ARGV[2])
return 1
