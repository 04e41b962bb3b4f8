-- Prism: protocols, one row per claim's pipeline (the aggregate, saved with
-- compare-and-set on version), and the work index: the open stage slots of
-- active pipelines, rewritten with the pipeline in the same statement.

CREATE TABLE agora_protocols (
    id  text COLLATE "C" PRIMARY KEY,
    doc jsonb NOT NULL
);

CREATE TABLE agora_pipelines (
    claim_id   text COLLATE "C" PRIMARY KEY REFERENCES agora_claims (id),
    version    bigint NOT NULL,
    doc        jsonb  NOT NULL,
    next_lease bigint NOT NULL DEFAULT 0
);
CREATE INDEX agora_pipelines_lease ON agora_pipelines (next_lease) WHERE next_lease <> 0;

CREATE TABLE agora_stage_work (
    slot_id  text COLLATE "C" PRIMARY KEY,
    claim_id text COLLATE "C" NOT NULL,
    role     text    NOT NULL,
    layer    integer NOT NULL,
    domain   text    NOT NULL
);
CREATE INDEX agora_stage_work_claim ON agora_stage_work (claim_id);
CREATE INDEX agora_stage_work_role ON agora_stage_work (role, slot_id);
CREATE INDEX agora_stage_work_layer ON agora_stage_work (layer, slot_id);
CREATE INDEX agora_stage_work_domain ON agora_stage_work (domain, slot_id);
CREATE INDEX agora_stage_work_role_layer ON agora_stage_work (role, layer, slot_id);
CREATE INDEX agora_stage_work_all ON agora_stage_work (domain, role, layer, slot_id);
