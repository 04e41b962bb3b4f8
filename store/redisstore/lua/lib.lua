-- Helpers linked into the scripts of this package (linkScript: each script
-- gets the ones it uses, a function being a closure to build on every
-- call), so each atomic operation stays one self-contained script while
-- the key layout of the job queue is written down once. Each helper is a
-- top-level local, its comment above it, ending at an "end" in the first
-- column.
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

-- job_item is one item of a job_text: its length in bytes, ':' and the
-- bytes (jobText in Go reads them).
local function job_item(s) return #s .. ':' .. s end

-- job_text is a claim as a take answers it, kept in its hash's jobv
-- field: how many claim items follow, then the claim's CLAIM_FIELDS values
-- (false: empty), then its comments' JSON, each a job_item. One field read
-- in place of the claim's fields and its comments list; a comment added
-- later is appended as its job_item. The count lets a text written before
-- CLAIM_FIELDS grew be read (jobText in Go): fields are only appended.
-- Claims stored before kept a jobtext field without the count (the first
-- seven fields) or, earlier, a job field nothing reads; claim_job_text
-- reads them and their next comment or domain write moves them to jobv.
local function job_text(claim, comments)
  local parts = {job_item(tostring(CLAIM_FIELDS_N))}
  for i = 1, CLAIM_FIELDS_N do
    parts[i + 1] = job_item(claim[i] or '')
  end
  for _, c in ipairs(comments) do
    parts[#parts + 1] = job_item(c)
  end
  return table.concat(parts)
end

-- legacy_job is a jobtext field, kept by claims stored before their job
-- text counted its claim items (seven then), as job_text writes it.
local function legacy_job(text) return job_item('7') .. text end

-- job_domain returns a claim's job text (job_text) with the claim's domain
-- item replaced by domain, the rest as it was: what a claim whose domain a
-- Prism layer rewrote keeps, so a take answers the claim as it is now.
local function job_domain(job, domain)
  local pos = 1
  for i = 0, C_domain do -- item 0 is the count of claim items
    local colon = string.find(job, ':', pos, true)
    local stop = colon + tonumber(string.sub(job, pos, colon - 1))
    if i == C_domain then
      return string.sub(job, 1, pos - 1) .. job_item(domain) .. string.sub(job, stop + 1)
    end
    pos = stop + 1
  end
end

-- rank_protocol writes a protocol name's place in the ranking of the names
-- claims were created under (claims:protocols:rank, score 0, so it sorts
-- by member): its member is 2^53 less its claims and 2^52 less its newest
-- claim's createdAt, each as 16 digits, then the name, so the most used
-- come first, then the latest used, then by name, as
-- slots.CompareProtocolUses orders them. claims:protocols:ranks maps the
-- name to its member. Both are computed again from the name's claims
-- index, so writing a name twice, or from two scripts, changes nothing.
local function rank_protocol(ns, name)
  local index = ns .. 'claims:protocol:' .. name
  local newest = redis.call('ZREVRANGEBYLEX', index, '+', '-', 'LIMIT', 0, 1)[1]
  local last = newest and tonumber(redis.call('HGET', ns .. 'claim:' .. newest, 'createdAt')) or 0
  last = math.max(math.min(last, 2 ^ 52), 1 - 2 ^ 52)
  local member = string.format('%016.0f%016.0f', 2 ^ 53 - redis.call('ZCARD', index), 2 ^ 52 - last) .. name
  local old = redis.call('HGET', ns .. 'claims:protocols:ranks', name)
  if old ~= member then
    if old then
      redis.call('ZREM', ns .. 'claims:protocols:rank', old)
    end
    redis.call('ZADD', ns .. 'claims:protocols:rank', 0, member)
    redis.call('HSET', ns .. 'claims:protocols:ranks', name, member)
  end
end

-- page_end answers a paging script's page of at most size members: '' for
-- the last one (fewer than size), setting marker_key; else its last member,
-- for the next page to start after.
local function page_end(page, size, marker_key)
  if #page < size then
    redis.call('SET', marker_key, '1')
    return ''
  end
  return page[#page]
end

-- put_claim writes a new claim's hash and indexes it among every claim,
-- its domain's and, when it has one, its protocol's (score 0: they sort
-- by ID, oldest first), the protocol's name then joining the names claims
-- were created under (protocols_key) and taking its new rank among them.
-- The caller has checked that the ID is free.
local function put_claim(ns, claim_key, claims_key, domain_key, protocol_key, protocols_key, id, title, body, domain, created_at, sources, protocol, author_id, author_name, updated_at)
  redis.call('HSET', claim_key, '_id', id, 'title', title, 'body', body,
    'domain', domain, 'createdAt', created_at, 'sources', sources, 'protocol', protocol,
    'authorId', author_id, 'authorName', author_name, 'updatedAt', updated_at,
    'jobv', job_text({id, title, body, domain, created_at, sources, protocol, author_id, author_name}, {}))
  redis.call('ZADD', claims_key, 0, id)
  redis.call('ZADD', domain_key, 0, id)
  if protocol ~= '' then
    redis.call('ZADD', protocol_key, 0, id)
    redis.call('ZADD', protocols_key, 0, protocol)
    rank_protocol(ns, protocol)
  end
end

-- put_key stores a new key's hash and indexes it among every key (keys)
-- and by its name (names: name -> ID, revoked keys included), or returns
-- the error code, writing nothing, when its ID or its name is taken.
-- Scopes are JSON; revoked_at '0' and signing '' for none.
local function put_key(key, keys, names, ns, id, name, avatar, scopes, created_at, revoked_at, hash, signing)
  if redis.call('EXISTS', key) == 1 then
    return 'key_exists'
  end
  if redis.call('EXISTS', names) == 0 then
    -- Keys stored before names were indexed: index them once.
    for _, kid in ipairs(redis.call('ZRANGE', keys, 0, -1)) do
      local kname = redis.call('HGET', ns .. 'key:' .. kid, 'name')
      if kname then
        redis.call('HSETNX', names, kname, kid)
      end
    end
  end
  if redis.call('HSETNX', names, name, id) == 0 then
    return 'key_name_taken'
  end
  redis.call('HSET', key, '_id', id, 'name', name, 'avatarUrl', avatar,
    'scopes', scopes, 'createdAt', created_at, 'hash', hash)
  if revoked_at ~= '0' then
    redis.call('HSET', key, 'revokedAt', revoked_at)
  end
  if signing ~= '' then
    redis.call('HSET', key, 'signingKeyAddress', signing)
  end
  redis.call('ZADD', keys, 0, id)
  return nil
end

-- queue_keys lists the four job-queue indexes an open slot belongs to: all,
-- by role, by domain, by role and domain. The role comes first in the last
-- one because roles never contain ':' while domains may. A script reuses
-- the list of a role and domain it has built (each name a new string).
local queue_key_lists = {}
local function queue_keys(ns, role, domain)
  local by_domain = queue_key_lists[role]
  if not by_domain then
    by_domain = {}
    queue_key_lists[role] = by_domain
  end
  local keys = by_domain[domain]
  if not keys then
    keys = {
      ns .. 'q:all',
      ns .. 'q:role:' .. role,
      ns .. 'q:domain:' .. domain,
      ns .. 'q:role:' .. role .. ':domain:' .. domain,
    }
    by_domain[domain] = keys
  end
  return keys
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

-- A slot taken from the queue leaves the index it was picked from at once
-- and the other three when its script ends (leave, then flush_leaving),
-- one ZREM per index for all the slots the script took: a command costs
-- Redis more than the removal itself. Until then a pick on another index
-- meets a slot no longer open and passes over it (first), so the scripts
-- that take call flush_leaving before they answer.
local leaving_keys, leaving = {}, {}
local function leave(key, id)
  local ids = leaving[key]
  if not ids then
    ids = {}
    leaving[key] = ids
    leaving_keys[#leaving_keys + 1] = key
  end
  ids[#ids + 1] = id
end

local function flush_leaving()
  for _, key in ipairs(leaving_keys) do
    redis.call('ZREM', key, unpack(leaving[key]))
  end
  leaving_keys, leaving = {}, {}
end

-- dequeue_taken takes slot id, picked from index picked, out of the queue:
-- out of picked now, out of the others with flush_leaving.
local function dequeue_taken(ns, id, picked, role, domain)
  for _, k in ipairs(queue_keys(ns, role, domain)) do
    if k == picked then
      redis.call('ZREM', k, id)
    else
      leave(k, id)
    end
  end
end

-- lapsed reports whether a taken slot's lease (a string field, absent when
-- the take has no lease) expired at or before now: slots.Slot.Lapsed, which
-- storetest's SlotRules pins this copy to.
local function lapsed(status, lease, now)
  local l = tonumber(lease)
  return status == 'taken' and l ~= nil and l ~= 0 and l <= now
end

-- touch_claim makes at (Unix ms, a string) the updatedAt of the claim
-- whose hash is key when it is later.
local function touch_claim(key, at)
  local cur = redis.call('HGET', key, 'updatedAt')
  if not cur or tonumber(at) > tonumber(cur) then
    redis.call('HSET', key, 'updatedAt', at)
  end
end

-- set_claim_domain writes domain as the claim's (its hash claim_key, its
-- role-slot list slots_key) with everything keyed by the domain: the
-- claim's job text, which a take answers (a claim stored before it had one
-- gets it with its next comment), its place in the domains' claims indexes
-- (domain_claims_key in Go) and, when the claim is ready (it has a draft),
-- its open role slots' places in the job queue; at (touch_claim) becomes
-- its updatedAt when later. What a Prism domain layer (prism_update) and a
-- calibration (calibrate) write.
local function set_claim_domain(ns, claim, claim_key, slots_key, domain, at)
  local c = redis.call('HMGET', claim_key, 'domain', 'hasDraft', 'jobv', 'jobtext')
  redis.call('HSET', claim_key, 'domain', domain)
  touch_claim(claim_key, at)
  if c[1] == domain then
    return
  end
  if c[3] then
    redis.call('HSET', claim_key, 'jobv', job_domain(c[3], domain))
  elseif c[4] then
    redis.call('HSET', claim_key, 'jobv', job_domain(legacy_job(c[4]), domain))
    redis.call('HDEL', claim_key, 'jobtext', 'job')
  end
  if c[1] then
    redis.call('ZREM', ns .. 'claims:domain:' .. c[1], claim)
  end
  redis.call('ZADD', ns .. 'claims:domain:' .. domain, 0, claim)
  if c[2] == '1' then
    for _, id in ipairs(redis.call('LRANGE', slots_key, 0, -1)) do
      local s = redis.call('HMGET', ns .. 'slot:' .. id, 'status', 'role')
      if s[1] == 'open' then
        dequeue(ns, id, s[2], c[1])
        enqueue(ns, id, s[2], domain)
      end
    end
  end
end

-- Prism's work index: the open stage slots of active pipelines, in sorted
-- sets named for every combination of role, layer and domain ('' and '0'
-- for "any"; layer 0's own is '=0', see prism.go's layerName), member "<slot ID> <claim ID>" with score 0 so they sort by
-- slot ID, oldest first. The domain comes last in the name because only it
-- may contain the separator. pwork:<claim> remembers a claim's entries.
-- open holds a slot's ID, role and layer name, for each open slot.
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

-- read_slot reads a slot's hash as this package answers it: SLOT_FIELDS
-- in order, false where absent (S_ names the positions; Go writes both).
local function read_slot(key)
  return redis.call('HMGET', key, SLOT_FIELDS())
end

-- read_claim reads a claim's hash so: CLAIM_FIELDS in order (C_).
local function read_claim(key)
  return redis.call('HMGET', key, CLAIM_FIELDS())
end

-- counted_claim is a claim (its hash key, its comments list comments_key)
-- as a read answers it: read_claim's fields, then how many comments it has
-- and its updatedAt ('' for a claim stored before it had one;
-- decodeCountedClaim in Go).
local function counted_claim(key, comments_key)
  local c = read_claim(key)
  c[CLAIM_FIELDS_N + 1] = redis.call('LLEN', comments_key)
  c[CLAIM_FIELDS_N + 2] = redis.call('HGET', key, 'updatedAt') or ''
  return c
end

-- queued_slot reads a job-queue entry's slot: QUEUED_FIELDS (Q_), all an
-- open slot's hash holds (a take adds the rest; the lease sweep removes
-- them when it reopens one).
local function queued_slot(ns, id)
  return redis.call('HMGET', ns .. 'slot:' .. id, QUEUED_FIELDS())
end

-- first returns the first entry at index positions from..to (to < 0: to the
-- end) whose claim the agent does not hold, that claim's ID and the slot's
-- queued_slot fields (nil when it is the last of fewer than skip); past
-- the skip first such entries, or the last one when there are fewer. It
-- reads one entry, then batches: the first entry is the answer unless the
-- agent holds its claim or it is skipped. With hold (a take; skip is 0),
-- the agent becomes the holder of the answer's claim in the same command
-- that checks it (HSETNX), so the take does not write it again. An entry
-- whose slot is no longer open (taken earlier in the same script, see
-- leave) is passed over and leaves this index too.
local function first(queue, ns, agent, from, to, skip, hold)
  local batch = 1
  local last_id, last_claim, last_fields
  while to < 0 or from <= to do
    local stop = from + batch - 1
    if to >= 0 and stop > to then
      stop = to
    end
    -- A number argument costs Redis a printf; the common first read is 0..0.
    local ids
    if from == 0 and stop == 0 then
      ids = redis.call('ZRANGE', queue, '0', '0')
    else
      ids = redis.call('ZRANGE', queue, from, stop)
    end
    for _, id in ipairs(ids) do
      -- An entry that may be the answer is read whole (the take's reply
      -- needs it); one a crowd's pick walks past, only for its claim.
      local fields, claim_id, status
      if skip == 0 then
        fields = queued_slot(ns, id)
        claim_id, status = fields[Q_claimId], fields[Q_status]
      else
        local f = redis.call('HMGET', ns .. 'slot:' .. id, 'claimId', 'status')
        claim_id, status = f[1], f[2]
      end
      local free
      if status ~= 'open' then
        free = false
        leave(queue, id)
      elseif agent == '' then
        free = true
      elseif hold then
        free = redis.call('HSETNX', ns .. 'holders:' .. claim_id, agent, id) == 1
      else
        free = redis.call('HEXISTS', ns .. 'holders:' .. claim_id, agent) == 0
      end
      if free then
        if skip == 0 then
          return id, claim_id, fields
        end
        skip = skip - 1
        last_id, last_claim, last_fields = id, claim_id, fields
      end
    end
    if #ids < stop - from + 1 then
      break
    end
    from, batch = stop + 1, 16
  end
  return last_id, last_claim, last_fields
end

-- pick_job returns the ID, claim ID and slot fields of the job-queue entry of index
-- queue that NextOpenSlot picks: the oldest (r < 0) or the one at
-- floor(r*n), walking forward (wrapping around for a random pick) past the
-- entries of claims where agent holds a slot, in any status: the claim's
-- holders hash, which take and the lease sweep keep and TakeSlot's
-- slot_held check reads. The cost is O(log n) plus one step per open slot of
-- a claim the agent holds, whatever the store holds; no scan. An oldest
-- pick passes over the skip oldest eligible entries (NextSlotParams.Skip),
-- answering the youngest when there are fewer. nil when no entry is
-- eligible. hold is first's.
local function pick_job(queue, ns, r, agent, skip, hold)
  local id, claim_id, fields
  if r < 0 then
    id, claim_id, fields = first(queue, ns, agent, 0, -1, skip, hold)
  else
    local n = redis.call('ZCARD', queue)
    if n == 0 then
      return nil
    end
    local i = math.floor(r * n)
    if i >= n then
      i = n - 1
    end
    id, claim_id, fields = first(queue, ns, agent, i, n - 1, 0, hold)
    if not id and i > 0 then
      id, claim_id, fields = first(queue, ns, agent, 0, i - 1, 0, hold)
    end
  end
  return id, claim_id, fields
end

-- append copies t's items to the end of out.
local function append(out, t)
  local n = #out
  for i = 1, #t do
    out[n + i] = t[i]
  end
end

-- claim_job_text is the jobv field (job_text) of the claim whose hash is
-- key, the claim's domain, its updatedAt ('' for a claim stored before it
-- had one) and how many comments it has; for a claim stored before the
-- jobv field, its jobtext field (legacy_job), or the field written now
-- from its fields and oldest comments.
local function claim_job_text(key, comments_key)
  local c = redis.call('HMGET', key, 'jobv', 'domain', 'jobtext', 'updatedAt', 'commentCount')
  local updated = c[4] or ''
  -- The count add_comment keeps beside the list, read with the claim's
  -- other fields: an LLEN of its own cost a take about a tenth more of
  -- Redis's time. Strings, not numbers: a number costs Redis a printf.
  if c[1] and c[5] then
    return c[1], c[2], updated, c[5]
  end
  local n = redis.call('LLEN', comments_key)
  local count = tostring(n)
  if n <= JOB_COMMENTS then
    if c[1] then
      return c[1], c[2], updated, count
    end
    if c[3] then
      return legacy_job(c[3]), c[2], updated, count
    end
  end
  -- A claim stored before its job text (no jobv), or before the text was
  -- bounded (more comments than a job carries, no count): its text is
  -- written now, as add_comment keeps it, so later takes read it whole.
  local claim = read_claim(key)
  local text = job_text(claim, redis.call('LRANGE', comments_key, '0', tostring(JOB_COMMENTS - 1)))
  redis.call('HSET', key, 'jobv', text, 'commentCount', count)
  redis.call('HDEL', key, 'job', 'jobtext')
  return text, claim[C_domain], updated, count
end

-- push_job appends a job to out as the scripts answer it, flat, so that a
-- reply of many jobs is one array (each table in a reply costs Redis a
-- string lookup per kind of reply it might be): the slot's ID, its
-- queued_slot fields (q, when given, already read), then the claim's
-- job_text, its updatedAt and its comment count. The rest of a slot taken
-- is what its taker sent, and Go fills it in. It returns the slot's role
-- and the claim's domain.
local function push_job(out, ns, id, claim_id, q)
  q = q or queued_slot(ns, id)
  local text, domain, updated, count = claim_job_text(ns .. 'claim:' .. claim_id, ns .. 'comments:' .. claim_id)
  out[#out + 1] = id
  append(out, q)
  out[#out + 1] = text
  out[#out + 1] = updated
  out[#out + 1] = count
  return q[Q_role], domain
end

-- assign_slot gives slot slot_id, whose checks passed, to key_id at now
-- with lease ("0" for none): the take of take.lua and take_next.lua.
-- leased says the slot's hash holds an earlier lease's leaseExpiresAt:
-- only such a slot can be in the leases index (every ZADD there sets that
-- field beside it), so only its take without a lease has one to clear.
-- holders is nil when the caller has made key_id the claim's holder.
local function assign_slot(ns, slot_id, holders, key_id, name, avatar, now, lease, leased)
  local slot = ns .. 'slot:' .. slot_id
  redis.call('HSET', slot, 'status', 'taken', 'apiKeyId', key_id,
    'agentName', name, 'agentAvatarUrl', avatar, 'takenAt', now)
  if lease ~= '0' then
    redis.call('HSET', slot, 'leaseExpiresAt', lease)
    redis.call('ZADD', ns .. 'leases', lease, slot_id)
  elseif leased then
    redis.call('HDEL', slot, 'leaseExpiresAt')
    redis.call('ZREM', ns .. 'leases', slot_id)
  end
  if holders then
    redis.call('HSET', holders, key_id, slot_id)
  end
end

-- finish_slot marks slot_id done for key_id at now and credits credit
-- when slots.Slot.FinishError allows it (this is that function's copy, its
-- checks in its order, pinned to it by storetest's SlotRules); it returns
-- the error code when it may not, else nil and the slot's DONE_FIELDS:
-- the rest of the slot as done is what the caller sent, and Go fills it
-- in. finish.lua, finish_many.lua and finish_take_next_many.lua.
local function finish_slot(ns, claim_id, slot_id, key_id, now, credit)
  local slot = ns .. 'slot:' .. slot_id
  local f = redis.call('HMGET', slot, 'claimId', 'status', 'apiKeyId', DONE_FIELDS())
  local status, lease = f[2], f[3 + D_leaseExpiresAt]
  if f[1] ~= claim_id then
    return 'slot_not_found'
  end
  if status == 'open' then
    return 'slot_not_taken'
  end
  if f[3] ~= key_id then
    return 'not_slot_owner'
  end
  if status ~= 'taken' or lapsed(status, lease, tonumber(now)) then
    return 'slot_not_taken'
  end
  redis.call('HSET', slot, 'status', 'done', 'doneAt', now)
  if lease then -- a slot taken without a lease is not in the leases index
    redis.call('ZREM', ns .. 'leases', slot_id)
  end
  -- The credit is in the same script as the transition, so a slot pays once.
  redis.call('HINCRBY', ns .. 'balances', key_id, credit)
  return nil, {unpack(f, 4, 3 + DONE_FIELDS_N)}
end

-- take_next is NextOpenSlot's pick (pick_job) and TakeSlot's take
-- (assign_slot) in one step: it appends the job taken to out (push_job)
-- and returns true, or returns false when no slot is eligible. take_next.lua,
-- take_next_many.lua and finish_take_next_many.lua, which call
-- flush_leaving before they answer. The slot comes from the queue, so it
-- is open, and an open slot holds no lease (release_expired.lua clears it
-- when it reopens one); the slot leaves the queue's indexes under the role
-- and domain the reply already read (dequeue_taken).
local function take_next(ns, queue, r, key_id, name, avatar, now, lease, out)
  local id, claim_id, q = pick_job(queue, ns, r, key_id, 0, true)
  if not id then
    return false
  end
  local holders
  if key_id == '' then
    holders = ns .. 'holders:' .. claim_id
  end
  assign_slot(ns, id, holders, key_id, name, avatar, now, lease, false)
  dequeue_taken(ns, id, queue, push_job(out, ns, id, claim_id, q))
  return true
end

-- The discussion and arena scripts (discussion_*.lua, arena_*.lua) derive
-- no key name of their own: they get each key in KEYS, or the prefix of a
-- kind of record in ARGV and append the record's ID, so that Go builds
-- every key of those aggregates (TestDiscussionAndArenaKeysBuiltInGo).

-- chat_upgrade moves a conversation's messages stored before message IDs
-- were store-wide (a list, a message's ID its position) to its sorted set
-- (a member is "<ID> <message JSON>", scored by the ID), numbering them
-- from the store's counter in their order. A no-op once the list is gone.
local function chat_upgrade(list, msgs, seq)
  local old = redis.call('LRANGE', list, 0, -1)
  for _, m in ipairs(old) do
    local id = redis.call('INCR', seq)
    redis.call('ZADD', msgs, id, id .. ' ' .. m)
  end
  if #old > 0 then
    redis.call('DEL', list)
  end
end
