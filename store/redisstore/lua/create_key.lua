-- KEYS: key hash, keys index, key names (name -> ID, revoked keys included).
-- ARGV: id, name, avatarUrl, scopes JSON, createdAt, revokedAt, hash (hex),
-- namespace, signing key address (empty: none).
local code = put_key(KEYS[1], KEYS[2], KEYS[3], ARGV[8], ARGV[1], ARGV[2], ARGV[3],
  ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[9])
if code then
  return fail(code)
end
return 1
