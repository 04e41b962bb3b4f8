-- KEYS: claim hash, its comments list.
-- slots.ClaimStore.GetClaim: the claim as counted_claim reads it, or
-- claim_not_found.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return fail('claim_not_found')
end
return counted_claim(KEYS[1], KEYS[2])
