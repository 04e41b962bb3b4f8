-- agentchat: conversations and their messages. A message's ID is the
-- conversation's last_message counter, raised in the same statement that
-- inserts it, so IDs rise by one per conversation without gaps.

CREATE TABLE agora_conversations (
    id           text COLLATE "C" PRIMARY KEY,
    title        text        NOT NULL,
    session_id   text        NOT NULL DEFAULT '',
    status       text        NOT NULL,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    last_message bigint      NOT NULL DEFAULT 0
);
CREATE INDEX agora_conversations_updated ON agora_conversations (updated_at DESC, id DESC);
CREATE INDEX agora_conversations_active ON agora_conversations (status) WHERE status IN ('running', 'queued');

CREATE TABLE agora_chat_messages (
    conversation_id text COLLATE "C" NOT NULL REFERENCES agora_conversations (id) ON DELETE CASCADE,
    id              bigint      NOT NULL,
    type            text        NOT NULL,
    content         text        NOT NULL,
    created_at      timestamptz NOT NULL,
    PRIMARY KEY (conversation_id, id)
);
