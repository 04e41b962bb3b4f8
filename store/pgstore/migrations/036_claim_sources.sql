-- slots: a claim's sources (AOP's citations), a JSON array of {url, title};
-- the claims stored before have none.

ALTER TABLE agora_claims ADD COLUMN sources jsonb NOT NULL DEFAULT '[]';
