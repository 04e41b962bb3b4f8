-- agentchat: who started a conversation (slot-machine's user column).

ALTER TABLE agora_conversations ADD COLUMN user_name text NOT NULL DEFAULT '';
