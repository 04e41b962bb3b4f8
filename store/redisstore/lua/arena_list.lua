-- KEYS: a games index (every game's, or one status's). ARGV: the game
-- hashes' key prefix (a game's key is it and the ID), limit.
-- arena.Store.ListGames: the newest limit games of the index, each as its
-- ID, status and creation time (ms), flat, read with the index in one step
-- so that a game's status is the one its index says.
local out = {}
for _, id in ipairs(redis.call('ZREVRANGEBYLEX', KEYS[1], '+', '-', 'LIMIT', 0, tonumber(ARGV[2]))) do
  local g = redis.call('HMGET', ARGV[1] .. id, 'status', 'created')
  out[#out + 1] = id
  out[#out + 1] = g[1] or ''
  out[#out + 1] = g[2] or '0'
end
return out
