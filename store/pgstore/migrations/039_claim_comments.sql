-- A claim's comments, kept on the claim as pgstore's commentsJSON builds
-- them (an array of text arrays, oldest first): AddComment writes the
-- column again in the transaction that inserts each comment, and a job's
-- answer reads the column. Built per job, they cost a batched seat an
-- index scan, a sort and an aggregate of agora_comments, about a tenth of
-- its instructions.
ALTER TABLE agora_claims ADD COLUMN comments json NOT NULL DEFAULT '[]';
UPDATE agora_claims c
SET comments = to_json(ARRAY(SELECT ARRAY[m.id, m.claim_id, m.body, m.comment_type, m.author_id, m.agent_name, m.created_at::text]
    FROM agora_comments m WHERE m.claim_id = c.id ORDER BY m.id))
WHERE EXISTS (SELECT 1 FROM agora_comments m WHERE m.claim_id = c.id);
