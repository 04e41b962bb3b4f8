package memstore

import (
	"context"
	"slices"
	"time"

	"github.com/agorahq/agora/arena"
)

var _ arena.Store = (*Store)(nil)

// CreateGame implements arena.Store.
func (s *Store) CreateGame(ctx context.Context, g arena.Game) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.games == nil {
		s.games = map[string]arena.Game{}
	}
	if _, ok := s.games[g.ID]; ok {
		return arena.ErrGameExists
	}
	s.games[g.ID] = g.Clone()
	s.gameOrder = insertSorted(s.gameOrder, g.ID)
	return nil
}

// GetGame implements arena.Store.
func (s *Store) GetGame(ctx context.Context, id string) (arena.Game, error) {
	if err := ctx.Err(); err != nil {
		return arena.Game{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.games[id]
	if !ok {
		return arena.Game{}, arena.ErrGameNotFound
	}
	return g.Clone(), nil
}

// ListGames implements arena.Store.
func (s *Store) ListGames(ctx context.Context, status arena.Status, limit int) ([]arena.Summary, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []arena.Summary{}
	for i := len(s.gameOrder) - 1; i >= 0 && len(out) < limit; i-- {
		g := s.games[s.gameOrder[i]]
		if status == "" || g.Status == status {
			out = append(out, arena.Summary{ID: g.ID, Status: g.Status, CreatedAt: g.CreatedAt})
		}
	}
	return out, nil
}

// UpdateGame implements arena.Store: the comparison, and on a conflict the
// copy of the stored game, under the mutex.
func (s *Store) UpdateGame(ctx context.Context, next arena.Game) (arena.Game, error) {
	if err := ctx.Err(); err != nil {
		return arena.Game{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.games[next.ID]
	if !ok {
		return arena.Game{}, arena.ErrGameNotFound
	}
	if cur.Version != next.Version-1 {
		return cur.Clone(), arena.ErrVersionConflict
	}
	s.games[next.ID] = next.Clone()
	return arena.Game{}, nil
}

// OverdueGames implements arena.Store. Memory has no deadline index; it
// scans the games, which a sweep every few seconds can afford.
func (s *Store) OverdueGames(ctx context.Context, now time.Time) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for id, g := range s.games {
		if g.PhaseDeadline != nil && !now.Before(*g.PhaseDeadline) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out, nil
}
