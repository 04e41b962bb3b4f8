-- The API key that created a claim and its name then (slots.Claim's
-- AuthorID and AuthorName), as the original's claims carry them. Claims
-- stored before have none.
ALTER TABLE agora_claims ADD COLUMN author_id text NOT NULL DEFAULT '', ADD COLUMN author_name text NOT NULL DEFAULT '';
