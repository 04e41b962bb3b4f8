-- KEYS: claim hash, claims index, the claim domain's claims index, the
-- claim protocol's claims index, the protocol names index.
-- ARGV: namespace, id, title, body, domain, createdAt, sources (a JSON array),
-- protocol ('' for none), author's key ID and name ('' for none),
-- updatedAt.
if redis.call('EXISTS', KEYS[1]) == 1 then
  return fail('claim_exists')
end
put_claim(ARGV[1], KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10], ARGV[11])
return 1
