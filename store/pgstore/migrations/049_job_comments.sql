-- A claim's comments column (migration 039) keeps its oldest
-- slots.JobComments (50) comments, what a job carries, so that a comment
-- past them writes the claim's row without rebuilding the column and a
-- take reads the same however many comments the claim has; comment_count
-- counts every one, and the comments listing reads agora_comments.
ALTER TABLE agora_claims ADD COLUMN comment_count integer NOT NULL DEFAULT 0;
UPDATE agora_claims c
SET comment_count = json_array_length(c.comments),
    comments = CASE WHEN json_array_length(c.comments) <= 50 THEN c.comments
        ELSE (SELECT json_agg(e ORDER BY i) FROM json_array_elements(c.comments) WITH ORDINALITY AS t(e, i) WHERE i <= 50) END
WHERE json_array_length(c.comments) > 0;
