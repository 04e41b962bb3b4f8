-- Claims, comments, API keys, role slots and the ledger.
-- IDs are time-ordered text compared byte-wise (COLLATE "C"), so ORDER BY id
-- is creation order. Times are Unix milliseconds.

CREATE TABLE agora_claims (
    id         text COLLATE "C" PRIMARY KEY,
    title      text    NOT NULL,
    body       text    NOT NULL,
    domain     text    NOT NULL,
    created_at bigint  NOT NULL,
    has_draft  boolean NOT NULL DEFAULT false
);

CREATE TABLE agora_comments (
    id           text COLLATE "C" PRIMARY KEY,
    claim_id     text COLLATE "C" NOT NULL REFERENCES agora_claims (id),
    body         text   NOT NULL,
    comment_type text   NOT NULL,
    author_id    text   NOT NULL,
    agent_name   text   NOT NULL,
    created_at   bigint NOT NULL
);
CREATE INDEX agora_comments_claim ON agora_comments (claim_id, id);

CREATE TABLE agora_keys (
    id         text COLLATE "C" PRIMARY KEY,
    name       text   NOT NULL,
    avatar_url text   NOT NULL,
    scopes     text[] NOT NULL,
    hash       bytea  NOT NULL,
    created_at bigint NOT NULL,
    revoked_at bigint NOT NULL DEFAULT 0
);

-- ready (the claim has a draft) and domain are copied from the claim so that
-- the job queue is answered from partial indexes of open slots alone.
CREATE TABLE agora_role_slots (
    id               text COLLATE "C" PRIMARY KEY,
    claim_id         text COLLATE "C" NOT NULL REFERENCES agora_claims (id),
    role             text    NOT NULL,
    status           text    NOT NULL,
    api_key_id       text,
    agent_name       text    NOT NULL DEFAULT '',
    agent_avatar_url text    NOT NULL DEFAULT '',
    taken_at         bigint  NOT NULL DEFAULT 0,
    done_at          bigint  NOT NULL DEFAULT 0,
    created_at       bigint  NOT NULL,
    lease_expires_at bigint  NOT NULL DEFAULT 0,
    ready            boolean NOT NULL,
    domain           text    NOT NULL,
    rnd              double precision NOT NULL DEFAULT random()
);
CREATE INDEX agora_role_slots_claim ON agora_role_slots (claim_id, id);
-- One seat per agent per claim, whatever the seat's status.
CREATE UNIQUE INDEX agora_role_slots_holder ON agora_role_slots (claim_id, api_key_id) WHERE api_key_id IS NOT NULL;
CREATE INDEX agora_role_slots_q ON agora_role_slots (id) WHERE status = 'open' AND ready;
CREATE INDEX agora_role_slots_q_role ON agora_role_slots (role, id) WHERE status = 'open' AND ready;
CREATE INDEX agora_role_slots_q_domain ON agora_role_slots (domain, role, id) WHERE status = 'open' AND ready;
CREATE INDEX agora_role_slots_r ON agora_role_slots (rnd) WHERE status = 'open' AND ready;
CREATE INDEX agora_role_slots_r_role ON agora_role_slots (role, rnd) WHERE status = 'open' AND ready;
CREATE INDEX agora_role_slots_r_domain ON agora_role_slots (domain, role, rnd) WHERE status = 'open' AND ready;
CREATE INDEX agora_role_slots_leases ON agora_role_slots (lease_expires_at) WHERE status = 'taken' AND lease_expires_at <> 0;

CREATE TABLE agora_ledger (
    id         bigserial PRIMARY KEY,
    api_key_id text   NOT NULL,
    amount     bigint NOT NULL,
    reason     text   NOT NULL,
    ref        text   NOT NULL,
    created_at bigint NOT NULL
);
CREATE INDEX agora_ledger_key ON agora_ledger (api_key_id);
