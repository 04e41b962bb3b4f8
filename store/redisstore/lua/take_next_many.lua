-- take_next.lua for many agents in one script.
-- ARGV: namespace, then per agent: its job-queue index (a key under the
-- namespace's hash tag), r, key ID, agent name, avatar URL, now, lease
-- expiry.
-- Returns per agent its job as take_next.lua does, or {} when none.
local ns = ARGV[1]
local out = {}
for i = 2, #ARGV, 7 do
  out[#out + 1] = take_next(ns, ARGV[i], tonumber(ARGV[i + 1]), ARGV[i + 2], ARGV[i + 3], ARGV[i + 4], ARGV[i + 5], ARGV[i + 6]) or {}
end
return out
