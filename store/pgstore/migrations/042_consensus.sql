-- The consensus records agents post for a claim (prism.Store.AddConsensus),
-- each the record's JSON, listed newest first by seq, the order they were
-- stored in. A pipeline's own record stays in its document.
CREATE TABLE agora_consensus (
    seq      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id       text COLLATE "C" NOT NULL UNIQUE,
    claim_id text COLLATE "C" NOT NULL REFERENCES agora_claims (id),
    doc      jsonb NOT NULL
);
CREATE INDEX agora_consensus_claim ON agora_consensus (claim_id, seq);
