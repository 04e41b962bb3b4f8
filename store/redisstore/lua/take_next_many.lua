-- take_next.lua for many agents in one script.
-- ARGV: namespace, then per agent: its job-queue index (a key under the
-- namespace's hash tag), r, key ID, agent name, avatar URL, now, lease
-- expiry.
-- Returns one flat array: per agent 1 and its job as push_job writes it,
-- or 0 when none is left for it.
local ns = ARGV[1]
local out = {}
for i = 2, #ARGV, 7 do
  local at = #out + 1
  out[at] = 1
  if not take_next(ns, ARGV[i], tonumber(ARGV[i + 1]), ARGV[i + 2], ARGV[i + 3], ARGV[i + 4], ARGV[i + 5], ARGV[i + 6], out) then
    out[at] = 0
  end
end
flush_leaving()
return out
