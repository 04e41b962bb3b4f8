package memstore

import (
	"context"
	"slices"
	"time"

	"github.com/agorahq/agora/arena"
)

var _ arena.Store = (*Store)(nil)

// gameLog is a game's append-only logs: feed items and resolved rounds.
// Their items are never changed once appended, so readers share them.
type gameLog struct {
	feed   []arena.FeedItem
	rounds []arena.Round
}

// appendLogs appends g.Appended to the game's logs; s.mu is held.
func (s *Store) appendLogs(g arena.Game) {
	if s.gameLogs == nil {
		s.gameLogs = map[string]*gameLog{}
	}
	l := s.gameLogs[g.ID]
	if l == nil {
		l = &gameLog{}
		s.gameLogs[g.ID] = l
	}
	l.feed = append(l.feed, g.Appended.Feed...)
	l.rounds = append(l.rounds, g.Appended.Rounds...)
}

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
	s.appendLogs(g)
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
	s.appendLogs(next)
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

// logOf returns a game's logs as they stand. Their items are never
// changed and appends only add past their length, so the caller reads the
// clipped slices without the mutex.
func (s *Store) logOf(ctx context.Context, id string) (gameLog, error) {
	if err := ctx.Err(); err != nil {
		return gameLog{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.games[id]; !ok {
		return gameLog{}, arena.ErrGameNotFound
	}
	if l := s.gameLogs[id]; l != nil {
		return gameLog{feed: slices.Clip(l.feed), rounds: slices.Clip(l.rounds)}, nil
	}
	return gameLog{}, nil
}

// FeedAfter implements arena.Store.
func (s *Store) FeedAfter(ctx context.Context, id string, after int64, limit int) ([]arena.FeedItem, error) {
	l, err := s.logOf(ctx, id)
	if err != nil {
		return nil, err
	}
	from := min(max(after, 0), int64(len(l.feed))) // item i has Seq i+1
	return slices.Clone(l.feed[from:min(int64(len(l.feed)), from+int64(max(limit, 0)))]), nil
}

// FeedLatest implements arena.Store.
func (s *Store) FeedLatest(ctx context.Context, id string, limit int) ([]arena.FeedItem, error) {
	l, err := s.logOf(ctx, id)
	if err != nil {
		return nil, err
	}
	out := []arena.FeedItem{}
	for i := len(l.feed) - 1; i >= 0 && len(out) < limit; i-- {
		out = append(out, l.feed[i])
	}
	return out, nil
}

// ResolvedRounds implements arena.Store.
func (s *Store) ResolvedRounds(ctx context.Context, id string) ([]arena.Round, error) {
	l, err := s.logOf(ctx, id)
	return append([]arena.Round{}, l.rounds...), err
}
