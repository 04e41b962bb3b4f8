-- A running or queued conversation's lease: until when the process that
-- runs or queues it vouches for it (agentchat.ConversationUpdate.LeaseUntil).
-- InterruptRunning spares a conversation whose lease is still running; one
-- without a lease (NULL, as every row stored before this column) is taken
-- for its process's leftover.
ALTER TABLE agora_conversations ADD COLUMN lease_until timestamptz;
