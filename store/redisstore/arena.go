package redisstore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
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
//	gfeed:<id>         list of the game's feed items (JSON), the one of Seq n at index n-1
//	grounds:<id>       list of the game's resolved rounds (JSON), in order
//
// Every key is built here, in Go: arena_save.lua, which must move a game
// from the index of the status it reads to another, gets the status
// indexes' prefix (gamesByStatusKey("")) and appends the status.
var arenaSaveScript = newScript("arena_save.lua")

// arenaListScript reads a games index and its games' status and creation
// time in one step (lua/arena_list.lua).
var arenaListScript = newScript("arena_list.lua")

// gamesByStatusKey is the index of the games in status st.
func (s *Store) gamesByStatusKey(st arena.Status) string { return s.key("games", string(st)) }

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
	args := []any{s.gamesByStatusKey(""), g.ID, g.Version, string(g.Status), deadline, doc, g.CreatedAt.UnixMilli(), create, len(g.Appended.Feed)}
	for _, it := range g.Appended.Feed {
		data, err := json.Marshal(it)
		if err != nil {
			return arena.Game{}, err
		}
		args = append(args, data)
	}
	for _, r := range g.Appended.Rounds {
		data, err := json.Marshal(r)
		if err != nil {
			return arena.Game{}, err
		}
		args = append(args, data)
	}
	res, err := arenaSaveScript.Run(ctx, s.client, []string{s.key("game", g.ID), s.key("games"), s.key("gdeadlines"),
		s.key("gfeed", g.ID), s.key("grounds", g.ID)}, args...).Result()
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

var arenaUpgradeScript = newScript("arena_upgrade.lua")

// legacyFeed marks a document stored with its feed inside: inside a JSON
// string a quote is escaped, so these bytes are a key.
var legacyFeed = []byte(`"feed":[`)

// upgradeGame moves the feed and resolved rounds of a document stored
// before they had logs into the logs (arena_upgrade.lua), once; the
// document keeps its rounds until its next save (arena.Game reads them).
func (s *Store) upgradeGame(ctx context.Context, id string, doc []byte) error {
	var old map[string]json.RawMessage
	if err := json.Unmarshal(doc, &old); err != nil {
		return fmt.Errorf("redisstore: game %s: %w", id, err)
	}
	var feed []map[string]any
	var rounds []map[string]any
	if err := json.Unmarshal(old["feed"], &feed); err != nil {
		return fmt.Errorf("redisstore: game %s: %w", id, err)
	}
	if raw, ok := old["rounds"]; ok {
		if err := json.Unmarshal(raw, &rounds); err != nil {
			return fmt.Errorf("redisstore: game %s: %w", id, err)
		}
	}
	delete(old, "feed")
	old["feed_len"] = json.RawMessage(strconv.Itoa(len(feed)))
	next, err := json.Marshal(old)
	if err != nil {
		return err
	}
	args := []any{doc, next, len(feed)}
	for i, it := range feed {
		it["seq"] = i + 1
		data, _ := json.Marshal(it)
		args = append(args, data)
	}
	for _, r := range rounds {
		if d, _ := r["decision"].(string); d != "" {
			data, _ := json.Marshal(r)
			args = append(args, data)
		}
	}
	_, err = arenaUpgradeScript.Run(ctx, s.client, []string{s.key("game", id), s.key("gfeed", id), s.key("grounds", id)}, args...).Result()
	return interpretError(ctx, err, nil)
}

// GetGame implements arena.Store. A game stored before its feed and
// rounds had logs is upgraded on its first read.
func (s *Store) GetGame(ctx context.Context, id string) (arena.Game, error) {
	doc, err := s.client.HGet(ctx, s.key("game", id), "doc").Bytes()
	if err != nil {
		return arena.Game{}, interpretError(ctx, err, arena.ErrGameNotFound)
	}
	if bytes.Contains(doc, legacyFeed) {
		if err := s.upgradeGame(ctx, id, doc); err != nil {
			return arena.Game{}, err
		}
	}
	var g arena.Game
	if err := json.Unmarshal(doc, &g); err != nil {
		return arena.Game{}, fmt.Errorf("redisstore: game %s: %w", id, err)
	}
	return g, nil
}

// ListGames implements arena.Store in one script (lua/arena_list.lua): one
// round trip, and each game with the status its index has.
func (s *Store) ListGames(ctx context.Context, status arena.Status, limit int) ([]arena.Summary, error) {
	if limit <= 0 {
		return []arena.Summary{}, ctx.Err()
	}
	index := s.key("games")
	if status != "" {
		index = s.gamesByStatusKey(status)
	}
	v, err := arenaListScript.Run(ctx, s.client, []string{index}, s.key("game", ""), limit).StringSlice()
	if err != nil {
		return nil, interpretError(ctx, err, nil)
	}
	out := make([]arena.Summary, 0, len(v)/3)
	for i := 0; i+2 < len(v); i += 3 {
		ms, _ := strconv.ParseInt(v[i+2], 10, 64)
		out = append(out, arena.Summary{ID: v[i], Status: arena.Status(v[i+1]), CreatedAt: time.UnixMilli(ms).UTC()})
	}
	return out, nil
}

// OverdueGames implements arena.Store.
func (s *Store) OverdueGames(ctx context.Context, now time.Time) ([]string, error) {
	ids, err := s.client.ZRangeArgs(ctx, redis.ZRangeArgs{Key: s.key("gdeadlines"), Start: "-inf", Stop: strconv.FormatInt(now.UnixMilli(), 10), ByScore: true}).Result()
	return ids, interpretError(ctx, err, nil)
}

// gameList reads a range of one of a game's lists in one round trip,
// with whether the game exists.
func (s *Store) gameList(ctx context.Context, id, list string, start, stop int64) ([]string, error) {
	var exists *redis.IntCmd
	var items *redis.StringSliceCmd
	_, err := s.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		exists = p.Exists(ctx, s.key("game", id))
		items = p.LRange(ctx, s.key(list, id), start, stop)
		return nil
	})
	if err != nil {
		return nil, interpretError(ctx, err, nil)
	}
	if exists.Val() == 0 {
		return nil, arena.ErrGameNotFound
	}
	return items.Val(), nil
}

func decodeAll[T any](id string, raw []string) ([]T, error) {
	out := make([]T, len(raw))
	for i, r := range raw {
		if err := json.Unmarshal([]byte(r), &out[i]); err != nil {
			return nil, fmt.Errorf("redisstore: game %s: %w", id, err)
		}
	}
	return out, nil
}

// FeedAfter implements arena.Store: the item of Seq n is at index n-1.
func (s *Store) FeedAfter(ctx context.Context, id string, after int64, limit int) ([]arena.FeedItem, error) {
	if limit <= 0 {
		return []arena.FeedItem{}, ctx.Err()
	}
	after = max(after, 0)
	raw, err := s.gameList(ctx, id, "gfeed", after, after+int64(limit)-1)
	if err != nil {
		return nil, err
	}
	return decodeAll[arena.FeedItem](id, raw)
}

// FeedLatest implements arena.Store.
func (s *Store) FeedLatest(ctx context.Context, id string, limit int) ([]arena.FeedItem, error) {
	if limit <= 0 {
		return []arena.FeedItem{}, ctx.Err()
	}
	raw, err := s.gameList(ctx, id, "gfeed", -int64(limit), -1)
	if err != nil {
		return nil, err
	}
	slices.Reverse(raw)
	return decodeAll[arena.FeedItem](id, raw)
}

// ResolvedRounds implements arena.Store.
func (s *Store) ResolvedRounds(ctx context.Context, id string) ([]arena.Round, error) {
	raw, err := s.gameList(ctx, id, "grounds", 0, -1)
	if err != nil {
		return nil, err
	}
	return decodeAll[arena.Round](id, raw)
}
