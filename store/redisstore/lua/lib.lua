-- Helpers prepended to every script of this package, so each atomic
-- operation stays one self-contained script while the key layout of the job
-- queue is written down once.
--
-- ARGV[1] of every script that derives keys is the store's namespace,
-- "{prefix}:". Keys derived inside a script (a slot's hash from a queue
-- member, a claim's domain indexes) cannot be declared in KEYS without an
-- extra round trip; they share the namespace's hash tag with the declared
-- keys, so they live on the same Cluster slot and the script stays
-- Cluster-safe.

-- fail returns the error reply that interpretError in Go maps to a
-- slots.Err* value. Two words, so neither Redis nor miniredis prepends "ERR".
local function fail(code)
  return redis.error_reply('AGORA ' .. code)
end

-- queue_keys lists the four job-queue indexes an open slot belongs to: all,
-- by role, by domain, by role and domain. The role comes first in the last
-- one because roles never contain ':' while domains may.
local function queue_keys(ns, role, domain)
  return {
    ns .. 'q:all',
    ns .. 'q:role:' .. role,
    ns .. 'q:domain:' .. domain,
    ns .. 'q:role:' .. role .. ':domain:' .. domain,
  }
end

-- Score 0 everywhere: members then sort by slot ID, which is time-ordered,
-- so ZRANGE 0 0 is the oldest slot.
local function enqueue(ns, id, role, domain)
  for _, k in ipairs(queue_keys(ns, role, domain)) do
    redis.call('ZADD', k, 0, id)
  end
end

local function dequeue(ns, id, role, domain)
  for _, k in ipairs(queue_keys(ns, role, domain)) do
    redis.call('ZREM', k, id)
  end
end

-- lapsed reports whether a taken slot's lease (a string field, absent when
-- the take has no lease) expired at or before now.
local function lapsed(status, lease, now)
  local l = tonumber(lease)
  return status == 'taken' and l ~= nil and l ~= 0 and l <= now
end

-- Prism's work index: the open stage slots of active pipelines, in sorted
-- sets named for every combination of role, layer and domain ('' and '0'
-- for "any"), member "<slot ID> <claim ID>" with score 0 so they sort by
-- slot ID, oldest first. The domain comes last in the name because only it
-- may contain the separator. pwork:<claim> remembers a claim's entries.
local function set_work(ns, claim, domain, open)
  local wk = ns .. 'pwork:' .. claim
  for _, e in ipairs(redis.call('LRANGE', wk, 0, -1)) do
    local sep = string.find(e, '\n', 1, true)
    redis.call('ZREM', string.sub(e, 1, sep - 1), string.sub(e, sep + 1))
  end
  redis.call('DEL', wk)
  for i = 1, #open, 3 do
    local member = open[i] .. ' ' .. claim
    for _, role in ipairs({'', open[i + 1]}) do
      for _, layer in ipairs({'0', open[i + 2]}) do
        for _, d in ipairs({'', domain}) do
          local k = ns .. 'w|' .. role .. '|' .. layer .. '|' .. d
          redis.call('ZADD', k, 0, member)
          redis.call('RPUSH', wk, k .. '\n' .. member)
        end
      end
    end
  end
end

local function set_lease(ns, claim, next_lease)
  if next_lease == '0' then
    redis.call('ZREM', ns .. 'pleases', claim)
  else
    redis.call('ZADD', ns .. 'pleases', next_lease, claim)
  end
end

-- push_game_logs appends a change's feed items and resolved rounds to a
-- game's lists: ARGV[at] is the number F of feed items, the F arguments
-- after it the items and the rest the rounds, JSON each (arena.Appended).
local function push_game_logs(feed_key, rounds_key, at)
  local nfeed = tonumber(ARGV[at])
  if nfeed > 0 then
    redis.call('RPUSH', feed_key, unpack(ARGV, at + 1, at + nfeed))
  end
  if #ARGV > at + nfeed then
    redis.call('RPUSH', rounds_key, unpack(ARGV, at + nfeed + 1, #ARGV))
  end
end
