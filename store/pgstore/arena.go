package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agorahq/agora/arena"
)

var _ arena.Store = (*Store)(nil)

// appended encodes a change's feed items and rounds as two JSON arrays.
func appended(g arena.Game) (feed, rounds []byte, err error) {
	if feed, err = json.Marshal(append([]arena.FeedItem{}, g.Appended.Feed...)); err != nil {
		return nil, nil, err
	}
	rounds, err = json.Marshal(append([]arena.Round{}, g.Appended.Rounds...))
	return feed, rounds, err
}

// appendLogs is the part of a statement that appends a change's feed
// items ($6) and rounds ($7) to game $1's logs when the CTE "upd" saved
// it.
const appendLogs = `
		feed AS (
			INSERT INTO agora_game_feed (game_id, seq, item)
			SELECT $1, (e->>'seq')::bigint, e FROM jsonb_array_elements($6::jsonb) AS e WHERE EXISTS (SELECT 1 FROM upd)),
		rounds AS (
			INSERT INTO agora_game_rounds (game_id, number, item)
			SELECT $1, (e->>'number')::integer, e FROM jsonb_array_elements($7::jsonb) AS e WHERE EXISTS (SELECT 1 FROM upd))`

// CreateGame implements arena.Store: the game and its appended items in
// one statement.
func (s *Store) CreateGame(ctx context.Context, g arena.Game) error {
	doc, err := json.Marshal(g)
	if err != nil {
		return err
	}
	feed, rounds, err := appended(g)
	if err != nil {
		return err
	}
	var saved bool
	err = s.get(ctx, &saved, `
		WITH upd AS (
			INSERT INTO agora_games (id, status, created_at, version, deadline, doc) VALUES ($1, $2, $3, $4, $5, $8)
			ON CONFLICT (id) DO NOTHING RETURNING id),`+appendLogs+`
		SELECT EXISTS (SELECT 1 FROM upd)`,
		g.ID, string(g.Status), g.CreatedAt, g.Version, g.PhaseDeadline, feed, rounds, doc)
	if err != nil {
		return interpretError(ctx, err)
	}
	if !saved {
		return arena.ErrGameExists
	}
	return nil
}

// GetGame implements arena.Store.
func (s *Store) GetGame(ctx context.Context, id string) (arena.Game, error) {
	var doc []byte
	err := s.get(ctx, &doc, `SELECT doc FROM agora_games WHERE id = $1`, id)
	if isNoRows(err) {
		return arena.Game{}, arena.ErrGameNotFound
	}
	if err != nil {
		return arena.Game{}, interpretError(ctx, err)
	}
	var g arena.Game
	if err := json.Unmarshal(doc, &g); err != nil {
		return arena.Game{}, fmt.Errorf("pgstore: game %s: %w", id, err)
	}
	return g, nil
}

// ListGames implements arena.Store.
func (s *Store) ListGames(ctx context.Context, status arena.Status, limit int) ([]arena.Summary, error) {
	var rows []struct {
		ID        string    `db:"id"`
		Status    string    `db:"status"`
		CreatedAt time.Time `db:"created_at"`
	}
	err := s.db.SelectContext(ctx, &rows, `SELECT id, status, created_at FROM agora_games
		WHERE ($1 = '' OR status = $1) ORDER BY id DESC LIMIT $2`, string(status), max(limit, 0))
	if err != nil {
		return nil, interpretError(ctx, err)
	}
	out := make([]arena.Summary, len(rows))
	for i, r := range rows {
		out[i] = arena.Summary{ID: r.ID, Status: arena.Status(r.Status), CreatedAt: r.CreatedAt.UTC()}
	}
	return out, nil
}

// UpdateGame implements arena.Store: one statement, a conditional UPDATE
// and, only when it matched nothing, the stored game's document. That read
// locks the row FOR SHARE: under READ COMMITTED a locking read returns the
// row's newest committed version, where a plain one would return the
// statement's snapshot — stale when the UPDATE waited for a concurrent save
// and then found the version moved. The lock ends with the statement.
func (s *Store) UpdateGame(ctx context.Context, next arena.Game) (arena.Game, error) {
	doc, err := json.Marshal(next)
	if err != nil {
		return arena.Game{}, err
	}
	feed, rounds, err := appended(next)
	if err != nil {
		return arena.Game{}, err
	}
	stmt, err := s.prepared(ctx, `
		WITH upd AS (
			UPDATE agora_games SET status = $2, version = $3, deadline = $4, doc = $5
			WHERE id = $1 AND version = $3 - 1 RETURNING id),`+appendLogs+`,
		cur AS (
			SELECT doc FROM agora_games WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM upd) FOR SHARE)
		SELECT EXISTS (SELECT 1 FROM upd) AS saved, (SELECT doc FROM cur) AS doc`)
	if err != nil {
		return arena.Game{}, err
	}
	var r struct {
		Saved bool   `db:"saved"`
		Doc   []byte `db:"doc"`
	}
	if err := stmt.GetContext(ctx, &r, next.ID, string(next.Status), next.Version, next.PhaseDeadline, doc, feed, rounds); err != nil {
		return arena.Game{}, interpretError(ctx, err)
	}
	switch {
	case r.Saved:
		return arena.Game{}, nil
	case r.Doc == nil:
		return arena.Game{}, arena.ErrGameNotFound
	}
	var cur arena.Game
	if err := json.Unmarshal(r.Doc, &cur); err != nil {
		return arena.Game{}, fmt.Errorf("pgstore: game %s: %w", next.ID, err)
	}
	return cur, arena.ErrVersionConflict
}

// OverdueGames implements arena.Store.
func (s *Store) OverdueGames(ctx context.Context, now time.Time) ([]string, error) {
	var ids []string
	err := s.db.SelectContext(ctx, &ids, `SELECT id FROM agora_games WHERE deadline IS NOT NULL AND deadline <= $1 ORDER BY id`, now)
	return ids, interpretError(ctx, err)
}

// gameLog reads rows of one of a game's logs in one statement: the
// query's first argument is the game's ID, and it answers one row with
// a NULL item when the game exists with nothing in range, none when it
// does not exist.
func gameLog[T any](ctx context.Context, s *Store, id, query string, args ...any) ([]T, error) {
	var rows [][]byte // a NULL item scans as an empty one: no JSON is empty
	if err := s.db.SelectContext(ctx, &rows, query, append([]any{id}, args...)...); err != nil {
		return nil, interpretError(ctx, err)
	}
	if len(rows) == 0 {
		return nil, arena.ErrGameNotFound
	}
	out := make([]T, 0, len(rows))
	for _, raw := range rows {
		if len(raw) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("pgstore: game %s: %w", id, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// FeedAfter implements arena.Store.
func (s *Store) FeedAfter(ctx context.Context, id string, after int64, limit int) ([]arena.FeedItem, error) {
	return gameLog[arena.FeedItem](ctx, s, id, `SELECT f.item FROM agora_games g LEFT JOIN LATERAL (
		SELECT item, seq FROM agora_game_feed WHERE game_id = g.id AND seq > $2 ORDER BY seq LIMIT $3) f ON true
		WHERE g.id = $1 ORDER BY f.seq`, after, max(limit, 0))
}

// FeedLatest implements arena.Store.
func (s *Store) FeedLatest(ctx context.Context, id string, limit int) ([]arena.FeedItem, error) {
	return gameLog[arena.FeedItem](ctx, s, id, `SELECT f.item FROM agora_games g LEFT JOIN LATERAL (
		SELECT item, seq FROM agora_game_feed WHERE game_id = g.id ORDER BY seq DESC LIMIT $2) f ON true
		WHERE g.id = $1 ORDER BY f.seq DESC`, max(limit, 0))
}

// ResolvedRounds implements arena.Store.
func (s *Store) ResolvedRounds(ctx context.Context, id string) ([]arena.Round, error) {
	return gameLog[arena.Round](ctx, s, id, `SELECT r.item FROM agora_games g LEFT JOIN LATERAL (
		SELECT item, number FROM agora_game_rounds WHERE game_id = g.id) r ON true
		WHERE g.id = $1 ORDER BY r.number`)
}
