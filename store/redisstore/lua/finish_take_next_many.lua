-- finish_many.lua and take_next_many.lua in one script: per item, the
-- agent's done and, when it succeeds, the same agent's next take, so an
-- agent working through the queue pays one script per seat.
-- KEYS: the leases index and balances hash (the other keys are derived from
-- the namespace, under the same hash tag).
-- ARGV: namespace, then per item: claim ID, slot ID, key ID, now, credit,
-- job-queue index, r, agent name, avatar URL, the take's now, lease expiry.
-- Returns one flat array: per item its done's error code, or '', its slot's
-- DONE_FIELDS (finish_slot's), then 1 and its next job as push_job writes
-- it, or 0 when none is left for it.
local ns = ARGV[1]
local out = {}
for i = 2, #ARGV, 11 do
  local slot_id, key_id = ARGV[i + 1], ARGV[i + 2]
  local code, done = finish_slot(ns, ARGV[i], slot_id, key_id, ARGV[i + 3], ARGV[i + 4])
  if code then
    out[#out + 1] = code
  else
    out[#out + 1] = ''
    append(out, done)
    local at = #out + 1
    out[at] = 1
    if not take_next(ns, ARGV[i + 5], tonumber(ARGV[i + 6]), key_id, ARGV[i + 7], ARGV[i + 8], ARGV[i + 9], ARGV[i + 10], out) then
      out[at] = 0
    end
  end
end
flush_leaving()
return out
