-- The Trolley Problem Arena: one row per game (the aggregate, saved with
-- compare-and-set on version), with its status and phase deadline beside
-- the document for the listing and the sweeper.

CREATE TABLE agora_games (
    id         text COLLATE "C" PRIMARY KEY,
    status     text        NOT NULL,
    created_at timestamptz NOT NULL,
    version    bigint      NOT NULL,
    deadline   timestamptz,
    doc        jsonb       NOT NULL
);
CREATE INDEX agora_games_status ON agora_games (status, id);
CREATE INDEX agora_games_deadline ON agora_games (deadline) WHERE deadline IS NOT NULL;
