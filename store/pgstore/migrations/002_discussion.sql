-- Discussion prompts and the squad chat.

CREATE TABLE agora_prompts (
    id                 text COLLATE "C" PRIMARY KEY,
    task_id            text,
    requester_agent    text        NOT NULL,
    prompt_message     text        NOT NULL,
    required_responses integer     NOT NULL,
    timeout_minutes    integer     NOT NULL,
    status             text        NOT NULL,
    collected_context  jsonb       NOT NULL DEFAULT '[]',
    squad_chat_id      text        NOT NULL,
    resolved_at        timestamptz,
    created_at         timestamptz NOT NULL,
    deadline           timestamptz NOT NULL
);
CREATE INDEX agora_prompts_open ON agora_prompts (deadline) WHERE status IN ('pending', 'collecting');
CREATE INDEX agora_prompts_task ON agora_prompts (task_id, id);

CREATE TABLE agora_squad_chat (
    id                   text COLLATE "C" PRIMARY KEY,
    agent_name           text        NOT NULL,
    message              text        NOT NULL,
    is_human             boolean     NOT NULL,
    message_type         text        NOT NULL,
    discussion_prompt_id text COLLATE "C",
    created_at           timestamptz NOT NULL
);
CREATE INDEX agora_squad_chat_prompt ON agora_squad_chat (discussion_prompt_id, id) WHERE discussion_prompt_id IS NOT NULL;
