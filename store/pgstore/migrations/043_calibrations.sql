-- A claim's calibrations (slots.ClaimStore.AddCalibration): the shares of
-- 100 agents score its domains with, each domain with its score at the
-- same index of domains and scores. seq is the order they were stored in,
-- which AddCalibration takes under the claim's row lock, so the latest by
-- seq is the one whose top domain the claim has (unless a Prism domain
-- layer wrote another since).
CREATE TABLE agora_calibrations (
    seq         bigserial PRIMARY KEY,
    id          text COLLATE "C" NOT NULL UNIQUE,
    claim_id    text COLLATE "C" NOT NULL REFERENCES agora_claims (id),
    domains     text[]  NOT NULL,
    scores      integer[] NOT NULL,
    total       integer NOT NULL,
    editor_id   text    NOT NULL,
    editor_name text    NOT NULL,
    created_at  bigint  NOT NULL
);
CREATE INDEX agora_calibrations_claim ON agora_calibrations (claim_id, seq);
