-- The arena's append-only logs beside each game's document: its feed
-- items (numbered by seq from 1) and its resolved rounds (by number),
-- each row written once, by the same statement as the compare-and-set
-- save of the change that made it (arena.Store.UpdateGame), and never
-- rewritten: a change costs the same however long its game has run.

CREATE TABLE agora_game_feed (
    game_id text COLLATE "C" NOT NULL REFERENCES agora_games (id),
    seq     bigint NOT NULL,
    item    jsonb  NOT NULL,
    PRIMARY KEY (game_id, seq)
);

CREATE TABLE agora_game_rounds (
    game_id text COLLATE "C" NOT NULL REFERENCES agora_games (id),
    number  integer NOT NULL,
    item    jsonb   NOT NULL,
    PRIMARY KEY (game_id, number)
);
