package redisstore

import "context"

// CountOpenSlots implements slots.SlotStore with one command: ZCARD of the
// job queue's unfiltered index, which a take leaves and an open slot of a
// drafted claim joins in the scripts that change them (lib.lua's enqueue
// and dequeue).
func (s *Store) CountOpenSlots(ctx context.Context) (int, error) {
	n, err := s.client.ZCard(ctx, s.queueKey("", "")).Result()
	if err != nil {
		return 0, interpretError(ctx, err, nil)
	}
	return int(n), nil
}
