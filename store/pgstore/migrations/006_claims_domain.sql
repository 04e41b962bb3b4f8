-- GET /api/v1/claims?domain=… pages through one domain's claims, newest
-- first.
CREATE INDEX agora_claims_domain ON agora_claims (domain, id);
