-- agentchat: message IDs come from one sequence, so they are unique across
-- every conversation of the store and rise in the order messages are stored
-- (slot-machine's chat page keeps the last ID it saw when the user starts a
-- new conversation). The messages stored before are numbered again, each
-- conversation's in its own order, conversations by when they were created;
-- the sequence goes on after them. The per-conversation counter goes: an
-- append locks the conversation's row instead, which orders the appends of
-- one conversation.

CREATE SEQUENCE agora_chat_message_ids AS bigint;

UPDATE agora_chat_messages SET id = -id;

UPDATE agora_chat_messages m SET id = n.id
FROM (
    SELECT msg.conversation_id, msg.id AS old,
           row_number() OVER (ORDER BY c.created_at, c.id, -msg.id) AS id
    FROM agora_chat_messages msg JOIN agora_conversations c ON c.id = msg.conversation_id
) n
WHERE m.conversation_id = n.conversation_id AND m.id = n.old;

SELECT setval('agora_chat_message_ids', max(id)) FROM agora_chat_messages HAVING count(*) > 0;

ALTER TABLE agora_conversations DROP COLUMN last_message;
