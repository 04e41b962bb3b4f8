-- KEYS: claims index (every claim's, or one domain's).
-- ARGV: namespace, strategy (latest, top, random), pool size, random draw
-- in [0,1), how many of its newest comments (none below 1).
-- slots.ClaimStore.PickClaim: the candidates are the pool's newest claims;
-- returns the pick (counted_claim) and its newest comments, oldest first.
local ns, strategy = ARGV[1], ARGV[2]
local ids = redis.call('ZREVRANGEBYLEX', KEYS[1], '+', '-', 'LIMIT', 0, tonumber(ARGV[3]))
if #ids == 0 then
  return fail('no_claims')
end
local pick = ids[1]
if strategy == 'top' then
  -- Newest first: of the claims tied on most comments, the newest stays.
  local most = redis.call('LLEN', ns .. 'comments:' .. pick)
  for i = 2, #ids do
    local n = redis.call('LLEN', ns .. 'comments:' .. ids[i])
    if n > most then
      pick, most = ids[i], n
    end
  end
elseif strategy == 'random' then
  local i = math.floor(tonumber(ARGV[4]) * #ids)
  pick = ids[math.max(math.min(i, #ids - 1), 0) + 1]
end
local limit = tonumber(ARGV[5])
local comments = {}
if limit > 0 then
  comments = redis.call('LRANGE', ns .. 'comments:' .. pick, -limit, -1)
end
return {counted_claim(ns .. 'claim:' .. pick, ns .. 'comments:' .. pick), comments}
