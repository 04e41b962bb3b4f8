-- The API key that asked a prompt, when the host requires keys on the
-- discussion routes: only it (or a discussion:admin key) closes the prompt.

ALTER TABLE agora_prompts ADD COLUMN requester_key text NOT NULL DEFAULT '';
