-- When a claim last changed (slots.Claim.UpdatedAt): its creation, its
-- latest comment, calibration or Prism domain write. A claim stored
-- before has its creation time until its next change, as on every backend.
ALTER TABLE agora_claims ADD COLUMN updated_at bigint NOT NULL DEFAULT 0;
UPDATE agora_claims SET updated_at = created_at;
