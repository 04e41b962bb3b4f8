-- The protocol a claim was created under (slots.Claim.Protocol), as the
-- original keeps it: the name its creator gave, or its pipeline's. Claims
-- stored before have none. agora_claims_protocol serves the protocolId
-- filter of the claims listing, newest first.
ALTER TABLE agora_claims ADD COLUMN protocol text NOT NULL DEFAULT '';
CREATE INDEX agora_claims_protocol ON agora_claims (protocol, id);
