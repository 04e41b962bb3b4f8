-- When a claim last changed (slots.Claim.UpdatedAt): its creation, its
-- latest comment, calibration or Prism domain write. A claim stored
-- before has 0, which its reads answer as its creation time
-- (GREATEST(updated_at, created_at)) until its next change, as on every
-- backend, so the migration rewrites no row.
ALTER TABLE agora_claims ADD COLUMN updated_at bigint NOT NULL DEFAULT 0;
