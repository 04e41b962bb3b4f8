package redisstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agorahq/agora/arena"
)

var _ arena.Store = (*Store)(nil)

// Arena keys, under the store's hash tag:
//
//	game:<id>          hash: version, status, created (ms), doc (the game's JSON)
//	games              zset (score 0) of every game ID, by ID
//	games:<status>     zset (score 0) of the game IDs in that status
//	gdeadlines         zset of games scored by their phase deadline (ms)
var arenaSaveScript = newScript("arena_save.lua")

// saveGame runs arena_save.lua: it creates the game (Version 1) or saves it
// with compare-and-set, and on a conflict of a save returns the stored game.
func (s *Store) saveGame(ctx context.Context, g arena.Game, create bool) (arena.Game, error) {
	doc, err := json.Marshal(g)
	if err != nil {
		return arena.Game{}, err
	}
	deadline := ""
	if g.PhaseDeadline != nil {
		deadline = strconv.FormatInt(g.PhaseDeadline.UnixMilli(), 10)
	}
	res, err := arenaSaveScript.Run(ctx, s.client, []string{s.key("game", g.ID), s.key("games"), s.key("gdeadlines")},
		s.ns, g.ID, g.Version, string(g.Status), deadline, doc, g.CreatedAt.UnixMilli(), create).Result()
	if err != nil {
		return arena.Game{}, interpretError(ctx, err, nil)
	}
	stored, ok := res.(string)
	if !ok {
		return arena.Game{}, nil
	}
	var cur arena.Game
	if err := json.Unmarshal([]byte(stored), &cur); err != nil {
		return arena.Game{}, fmt.Errorf("redisstore: game %s: %w", g.ID, err)
	}
	return cur, arena.ErrVersionConflict
}

// CreateGame implements arena.Store.
func (s *Store) CreateGame(ctx context.Context, g arena.Game) error {
	_, err := s.saveGame(ctx, g, true)
	return err
}

// UpdateGame implements arena.Store in one script, which also reads the
// stored game when the comparison fails.
func (s *Store) UpdateGame(ctx context.Context, next arena.Game) (arena.Game, error) {
	return s.saveGame(ctx, next, false)
}

// GetGame implements arena.Store.
func (s *Store) GetGame(ctx context.Context, id string) (arena.Game, error) {
	doc, err := s.client.HGet(ctx, s.key("game", id), "doc").Bytes()
	if err != nil {
		return arena.Game{}, interpretError(ctx, err, arena.ErrGameNotFound)
	}
	var g arena.Game
	if err := json.Unmarshal(doc, &g); err != nil {
		return arena.Game{}, fmt.Errorf("redisstore: game %s: %w", id, err)
	}
	return g, nil
}

// ListGames implements arena.Store.
func (s *Store) ListGames(ctx context.Context, status arena.Status, limit int) ([]arena.Summary, error) {
	if limit <= 0 {
		return []arena.Summary{}, ctx.Err()
	}
	index := s.key("games")
	if status != "" {
		index = s.ns + "games:" + string(status)
	}
	ids, err := s.client.ZRevRangeByLex(ctx, index, &redis.ZRangeBy{Min: "-", Max: "+", Count: int64(limit)}).Result()
	if err != nil {
		return nil, interpretError(ctx, err, nil)
	}
	out := make([]arena.Summary, 0, len(ids))
	for _, id := range ids {
		v, err := s.client.HMGet(ctx, s.key("game", id), "status", "created").Result()
		if err != nil {
			return nil, interpretError(ctx, err, nil)
		}
		st, _ := v[0].(string)
		created, _ := v[1].(string)
		ms, _ := strconv.ParseInt(created, 10, 64)
		out = append(out, arena.Summary{ID: id, Status: arena.Status(st), CreatedAt: time.UnixMilli(ms).UTC()})
	}
	return out, nil
}

// OverdueGames implements arena.Store.
func (s *Store) OverdueGames(ctx context.Context, now time.Time) ([]string, error) {
	ids, err := s.client.ZRangeArgs(ctx, redis.ZRangeArgs{Key: s.key("gdeadlines"), Start: "-inf", Stop: strconv.FormatInt(now.UnixMilli(), 10), ByScore: true}).Result()
	return ids, interpretError(ctx, err, nil)
}
