package pgstore

import "context"

// CountOpenSlots implements slots.SlotStore with one statement. Its
// predicate is the job queue's (queued), so it can read the queue's
// partial index agora_role_slots_q: the cost is the queue's depth, not the
// table's size.
func (s *Store) CountOpenSlots(ctx context.Context) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx,
		`SELECT count(*) FROM agora_role_slots q WHERE `+queued).Scan(&n)
	if err != nil {
		return 0, interpretError(ctx, err)
	}
	return n, nil
}
