-- KEYS: the leases index and balances hash (the slots' keys are derived
-- from the namespace, under the same hash tag).
-- ARGV: namespace, then per slot: claim ID, slot ID, key ID, now, credit.
-- Returns one flat array: per slot its error code, or '' and its fields as
-- done (finish_slot's DONE_FIELDS).
local ns = ARGV[1]
local out = {}
for i = 2, #ARGV, 5 do
  local code, done = finish_slot(ns, ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4])
  if code then
    out[#out + 1] = code
  else
    out[#out + 1] = ''
    append(out, done)
  end
end
return out
