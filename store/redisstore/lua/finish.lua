-- KEYS: slot hash, leases index, balances hash.
-- ARGV: namespace, claim ID, slot ID, key ID, now, credit.
local code, done = finish_slot(ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6])
if code then
  return fail(code)
end
return done
