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
	res, err := s.db.ExecContext(ctx, `INSERT INTO agora_games (id, status, created_at, version, deadline, doc) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (id) DO NOTHING`,
		g.ID, string(g.Status), g.CreatedAt, g.Version, g.PhaseDeadline, doc)
	if err != nil {
		return interpretError(ctx, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return interpretError(ctx, err)
	} else if n == 0 {
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
	stmt, err := s.prepared(ctx, `
		WITH upd AS (
			UPDATE agora_games SET status = $2, version = $3, deadline = $4, doc = $5
			WHERE id = $1 AND version = $3 - 1 RETURNING id),
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
	if err := stmt.GetContext(ctx, &r, next.ID, string(next.Status), next.Version, next.PhaseDeadline, doc); err != nil {
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
