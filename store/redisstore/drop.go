package redisstore

import "context"

// keyPatterns are the SCAN patterns of every key the store keeps: its own
// under its hash tag, and its rate limiter's (redis_rate puts "rate:" in
// front of the limiter's keys).
func (s *Store) keyPatterns() []string { return []string{s.ns + "*", "rate:" + s.ns + "*"} }

// Empty reports whether the store keeps no key at all under its prefix
// (its rate limiter's included): what a caller checks before it takes a
// prefix as its own, so that Drop later removes only what it wrote.
func (s *Store) Empty(ctx context.Context) (bool, error) {
	for _, match := range s.keyPatterns() {
		iter := s.client.Scan(ctx, 0, match, 1000).Iterator()
		if iter.Next(ctx) {
			return false, nil
		}
		if err := iter.Err(); err != nil {
			return false, interpretError(ctx, err, nil)
		}
	}
	return true, nil
}

// Drop deletes every key the store keeps — claims, keys, games, prompts,
// conversations and rate-limit counters — and nothing of other prefixes,
// and returns how many it deleted. Keys written while it runs may stay.
// It is how a demo or a tenant's data is removed from a shared server.
func (s *Store) Drop(ctx context.Context) (int, error) {
	n := 0
	for _, match := range s.keyPatterns() {
		iter := s.client.Scan(ctx, 0, match, 1000).Iterator()
		var batch []string
		flush := func() error {
			if len(batch) == 0 {
				return nil
			}
			d, err := s.client.Unlink(ctx, batch...).Result()
			n += int(d)
			batch = batch[:0]
			return err
		}
		for iter.Next(ctx) {
			if batch = append(batch, iter.Val()); len(batch) == 500 {
				if err := flush(); err != nil {
					return n, interpretError(ctx, err, nil)
				}
			}
		}
		if err := iter.Err(); err != nil {
			return n, interpretError(ctx, err, nil)
		}
		if err := flush(); err != nil {
			return n, interpretError(ctx, err, nil)
		}
	}
	return n, nil
}
