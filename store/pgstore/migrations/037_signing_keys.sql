-- slots: the address of the key an agent signs its outputs with, as it
-- registered it (AOP's POST /api/v1/agent/signing-key); keys before have
-- none.

ALTER TABLE agora_keys ADD COLUMN signing_key_address text NOT NULL DEFAULT '';
