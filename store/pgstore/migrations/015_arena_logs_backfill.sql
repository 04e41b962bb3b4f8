-- Games stored before 014 kept their feed and rounds inside the document:
-- copy them into the logs (feed items numbered by their position, resolved
-- rounds by number) and leave the document its feed's length. Its rounds
-- stay until its next save; arena.Game's UnmarshalJSON reads them as the
-- current round, the ended ones and the agents' coverage.

INSERT INTO agora_game_feed (game_id, seq, item)
SELECT g.id, f.ord, f.elem || jsonb_build_object('seq', f.ord)
FROM agora_games g CROSS JOIN LATERAL jsonb_array_elements(g.doc->'feed') WITH ORDINALITY AS f(elem, ord)
WHERE jsonb_typeof(g.doc->'feed') = 'array'
ON CONFLICT DO NOTHING;

INSERT INTO agora_game_rounds (game_id, number, item)
SELECT g.id, (r.elem->>'number')::integer, r.elem
FROM agora_games g CROSS JOIN LATERAL jsonb_array_elements(g.doc->'rounds') AS r(elem)
WHERE jsonb_typeof(g.doc->'rounds') = 'array' AND coalesce(r.elem->>'decision', '') <> ''
ON CONFLICT DO NOTHING;

UPDATE agora_games SET doc = (doc - 'feed') || jsonb_build_object('feed_len', jsonb_array_length(doc->'feed'))
WHERE jsonb_typeof(doc->'feed') = 'array';
