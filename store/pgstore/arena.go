package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agorahq/agora/arena"
)

var _ arena.Store = (*Store)(nil)

// CreateGame implements arena.Store.
func (s *Store) CreateGame(ctx context.Context, g arena.Game) error {
	doc, err := json.Marshal(g)
	if err != nil {
		return err
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO agora_games (id, status, created_at, version, deadline, doc) VALUES ($1, $2, $3, $4, $5, $6)`,
		g.ID, string(g.Status), g.CreatedAt, g.Version, g.PhaseDeadline, doc)
	return interpretError(ctx, err)
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

// UpdateGame implements arena.Store: one conditional UPDATE.
func (s *Store) UpdateGame(ctx context.Context, next arena.Game) error {
	doc, err := json.Marshal(next)
	if err != nil {
		return err
	}
	stmt, err := s.prepared(ctx, `
		WITH upd AS (
			UPDATE agora_games SET status = $2, version = $3, deadline = $4, doc = $5
			WHERE id = $1 AND version = $3 - 1 RETURNING id)
		SELECT EXISTS (SELECT 1 FROM upd) AS saved, EXISTS (SELECT 1 FROM agora_games WHERE id = $1) AS found`)
	if err != nil {
		return err
	}
	var r struct {
		Saved bool `db:"saved"`
		Found bool `db:"found"`
	}
	if err := stmt.GetContext(ctx, &r, next.ID, string(next.Status), next.Version, next.PhaseDeadline, doc); err != nil {
		return interpretError(ctx, err)
	}
	switch {
	case r.Saved:
		return nil
	case !r.Found:
		return arena.ErrGameNotFound
	}
	return arena.ErrVersionConflict
}

// OverdueGames implements arena.Store.
func (s *Store) OverdueGames(ctx context.Context, now time.Time) ([]string, error) {
	var ids []string
	err := s.db.SelectContext(ctx, &ids, `SELECT id FROM agora_games WHERE deadline IS NOT NULL AND deadline <= $1 ORDER BY id`, now)
	return ids, interpretError(ctx, err)
}
