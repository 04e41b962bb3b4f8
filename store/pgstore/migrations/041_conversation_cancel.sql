-- A cancel asked of a running or queued conversation from a process other
-- than the one running it (agentchat.Store.RequestCancel): that process
-- finds it when it renews its lease (RenewConversations returns it), so a
-- cancel whose notification was lost still stops the run. Cleared when the
-- conversation leaves running and queued. Rows stored before this column
-- have no request.
ALTER TABLE agora_conversations ADD COLUMN cancel_requested boolean NOT NULL DEFAULT false;
