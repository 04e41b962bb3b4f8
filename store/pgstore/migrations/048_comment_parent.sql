-- The comment a comment replies to (slots.Comment.ParentID), as the
-- original's parentCommentId; '' for none. A claim's comments column
-- (migration 039) gains it as an eighth text with the claim's next
-- comment; till then its arrays have seven, which read as no parent.
ALTER TABLE agora_comments ADD COLUMN parent_id text NOT NULL DEFAULT '';
