-- KEYS: prompt hash, its context list. Returns {hash, context}, or an
-- empty hash for an unknown prompt.
return {redis.call('HGETALL', KEYS[1]), redis.call('LRANGE', KEYS[2], 0, -1)}
