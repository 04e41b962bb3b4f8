-- Squad-chat messages carry the task they are about and the message they
-- answer (mission-control's task_ref and reply_to_id).

ALTER TABLE agora_squad_chat
    ADD COLUMN task_ref    text,
    ADD COLUMN reply_to_id text COLLATE "C" REFERENCES agora_squad_chat (id);
CREATE INDEX agora_squad_chat_reply ON agora_squad_chat (reply_to_id) WHERE reply_to_id IS NOT NULL;
