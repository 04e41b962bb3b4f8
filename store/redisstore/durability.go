package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"
)

// Durability is what a Redis server keeps across its own restart.
type Durability struct {
	// Snapshots is true when the server writes RDB snapshots (CONFIG save).
	Snapshots bool
	// AppendOnly is true when it logs every write (CONFIG appendonly).
	AppendOnly bool
}

// Keeps reports whether anything survives a restart of the server.
func (d Durability) Keeps() bool { return d.Snapshots || d.AppendOnly }

// Durability asks the server what it keeps on disk. A server that refuses
// CONFIG GET (a managed Redis may) answers an error: the caller cannot
// tell, and should say so rather than guess.
func (s *Store) Durability(ctx context.Context) (Durability, error) {
	cfg, err := s.client.ConfigGet(ctx, "save").Result()
	if err != nil {
		return Durability{}, interpretError(ctx, err, nil)
	}
	aof, err := s.client.ConfigGet(ctx, "appendonly").Result()
	if err != nil {
		return Durability{}, interpretError(ctx, err, nil)
	}
	return Durability{Snapshots: cfg["save"] != "", AppendOnly: aof["appendonly"] == "yes"}, nil
}

// markerKey holds a value this process wrote: a server that comes back
// without it has lost every key of the store.
func (s *Store) markerKey() string { return s.key("marker") }

// WatchForReset notices the store's data vanishing — a Redis without
// persistence that restarted, a FLUSHALL — which would otherwise show only
// as every key unknown and every game missing. It writes a marker key
// (keeping one another process wrote) and checks it every interval until
// ctx is done, calling onReset when it is gone and writing it again;
// onErr gets the checks that failed (the server unreachable). It blocks.
func (s *Store) WatchForReset(ctx context.Context, every time.Duration, onReset func(), onErr func(error)) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	mark := hex.EncodeToString(b[:])
	t := time.NewTicker(every)
	defer t.Stop()
	for first := true; ; first = false {
		// SET NX writes the marker only where it is missing.
		wrote, err := s.client.SetNX(ctx, s.markerKey(), mark, 0).Result()
		switch {
		case err != nil && ctx.Err() == nil:
			onErr(interpretError(ctx, err, nil))
		case err == nil && wrote && !first:
			onReset()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
