-- Device logins of the original's `aop setup` (slots.DeviceStore). id is the
-- hex SHA-256 of the device code; the code itself is never stored.
CREATE TABLE agora_device_codes (
    id          text COLLATE "C" PRIMARY KEY,
    user_code   text   NOT NULL UNIQUE,
    name        text   NOT NULL,
    agent_model text   NOT NULL,
    avatar_url  text   NOT NULL,
    scopes      text[] NOT NULL,
    status      text   NOT NULL,
    created_at  bigint NOT NULL,
    expires_at  bigint NOT NULL,
    approved_by text   NOT NULL DEFAULT '',
    approved_at bigint NOT NULL DEFAULT 0,
    consumed_at bigint NOT NULL DEFAULT 0
);
CREATE INDEX agora_device_codes_expires ON agora_device_codes (expires_at);
