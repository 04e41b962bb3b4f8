package redisstore

import "context"

// keyPatterns are the SCAN patterns of every key the store keeps: its own
// under its hash tag, and its rate limiter's (redis_rate puts "rate:" in
// front of the limiter's keys).
func (s *Store) keyPatterns() []string { return []string{s.ns + "*", "rate:" + s.ns + "*"} }

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
