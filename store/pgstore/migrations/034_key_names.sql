-- A key's name is who it is in a discussion, so names are unique, revoked
-- keys included (a name is never reused). Keys stored before this share a
-- name with an older key only by mistake: the younger ones are renamed
-- "<name> (<id>)" so that the index can be built, and keep working.
UPDATE agora_keys k SET name = k.name || ' (' || k.id || ')'
WHERE EXISTS (SELECT 1 FROM agora_keys o WHERE o.name = k.name AND o.id < k.id);
CREATE UNIQUE INDEX agora_keys_name ON agora_keys (name);
