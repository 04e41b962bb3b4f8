-- How many claims were created under each protocol name and when the
-- newest was (slots.ClaimStore.ProtocolUses), kept by the statement that
-- inserts each claim, so the protocols listing reads one row a name
-- instead of every claim. Claims stored before are counted here.
CREATE TABLE agora_protocol_uses (
    name         text PRIMARY KEY,
    claims       bigint NOT NULL,
    last_used_at bigint NOT NULL
);
CREATE INDEX agora_protocol_uses_order ON agora_protocol_uses (claims DESC, last_used_at DESC, name);
INSERT INTO agora_protocol_uses (name, claims, last_used_at)
SELECT protocol, count(*), max(created_at) FROM agora_claims WHERE protocol <> '' GROUP BY protocol;
