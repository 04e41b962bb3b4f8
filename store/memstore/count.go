package memstore

import "context"

// CountOpenSlots implements slots.SlotStore: the eligible entries of the
// job queue's unfiltered index, under the store's lock. The queue drops
// its entries lazily (jobqueue.go), so the count walks the index and drops
// the stale entries it meets, as a pick would: the walk costs the open
// slots plus the entries gone stale since the last walk or pick, and takes
// add nothing to keep it.
func (s *Store) CountOpenSlots(ctx context.Context) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queue.count(), nil
}

// count returns how many slots the unfiltered index holds that are still
// eligible, dropping the others. It walks from the end so that drop's swap
// brings an entry already counted into the place it frees.
func (q *jobQueue) count() int {
	k := queueKey{}
	set := q.sets[k]
	if set == nil {
		return 0
	}
	n := 0
	for i := len(set.recs) - 1; i >= 0; i-- {
		if rec := set.recs[i]; eligible(rec, k) {
			n++
		} else {
			set.drop(rec)
		}
	}
	return n
}
