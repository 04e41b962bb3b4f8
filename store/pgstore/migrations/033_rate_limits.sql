-- The per-key rate limit shared by every process on the database (Limiter):
-- one row per API key, its GCRA theoretical arrival time in microseconds
-- since the epoch. Unlogged: the state is seconds old and worth no WAL; a
-- crash forgets it, which lets a key's next burst through once.
CREATE UNLOGGED TABLE agora_rate_limits (
    key text PRIMARY KEY,
    tat bigint NOT NULL
);
