package memstore

import (
	"github.com/agorahq/agora/slots"
	"github.com/google/btree"
)

// The job queue indexes the open slots of claims that have a draft under four
// keys per slot (all, by role, by domain, by domain and role), so every filter
// combination of NextOpenSlot finds its answer without a scan.
//
// Entries are removed lazily: a take only flips the slot's status, and the
// queue drops entries that are no longer eligible when a pick meets them.
// That keeps take — the hot path every agent races on — to a few map
// operations, and every entry is still removed at most once.
//
// A pick for an agent steps over (and keeps) the entries of claims where the
// agent holds a slot, asking each claim's holder index (claimRec.holders:
// key ID -> its slot in any status, kept by take and the lease sweep, and
// left alone by reconfiguring, which only replaces open slots). The steps
// are the open slots of the claims the agent holds — a configuration opens
// at most slots.MaxSlotsPerConfigure — so the cost stays bounded for an
// agent holding a bounded number of seats, whatever the store holds.

type queueKey struct {
	role   slots.Role
	domain string
}

type queueItem struct {
	seq uint64 // creation order of the slot in this store
	rec *slotRec
}

func lessItem(a, b queueItem) bool { return a.seq < b.seq }

// openSet is one index: a B-tree in creation order for "oldest", and a slice
// with swap-removal for a uniform random pick.
type openSet struct {
	tree *btree.BTreeG[queueItem]
	recs []*slotRec
	pos  map[*slotRec]int
}

type jobQueue struct {
	sets map[queueKey]*openSet
}

func keysOf(rec *slotRec) [4]queueKey {
	d := rec.claim.claim.Domain
	return [4]queueKey{{}, {role: rec.slot.Role}, {domain: d}, {role: rec.slot.Role, domain: d}}
}

// eligible reports whether rec belongs under k right now.
func eligible(rec *slotRec, k queueKey) bool {
	return !rec.deleted && rec.slot.Status == slots.StatusOpen && rec.claim.hasDraft &&
		(k.role == "" || k.role == rec.slot.Role) &&
		(k.domain == "" || k.domain == rec.claim.claim.Domain)
}

// add indexes an eligible slot (again); adding one already indexed is a no-op.
func (q *jobQueue) add(rec *slotRec) {
	for _, k := range keysOf(rec) {
		set := q.sets[k]
		if set == nil {
			set = &openSet{tree: btree.NewG(32, lessItem), pos: map[*slotRec]int{}}
			q.sets[k] = set
		}
		if _, ok := set.pos[rec]; ok {
			continue
		}
		set.tree.ReplaceOrInsert(queueItem{rec.seq, rec})
		set.pos[rec] = len(set.recs)
		set.recs = append(set.recs, rec)
	}
}

func (set *openSet) drop(rec *slotRec) {
	i := set.pos[rec]
	set.tree.Delete(queueItem{seq: rec.seq})
	last := len(set.recs) - 1
	set.recs[i] = set.recs[last]
	set.pos[set.recs[i]] = i
	set.recs[last] = nil
	set.recs = set.recs[:last]
	delete(set.pos, rec)
}

// heldBy reports whether agent holds a slot, in any status, on rec's claim;
// the empty agent holds nothing.
func heldBy(rec *slotRec, agent string) bool {
	if agent == "" {
		return false
	}
	_, ok := rec.claim.holders[agent]
	return ok
}

// pick returns the oldest eligible slot under k when r < 0 (past the skip
// oldest ones, or the youngest when there are fewer), else a random one, on
// a claim where agent holds no slot, dropping the stale entries it meets.
func (q *jobQueue) pick(k queueKey, r float64, agent string, skip int) (*slotRec, bool) {
	set := q.sets[k]
	if set == nil {
		return nil, false
	}
	if r < 0 && (agent != "" || skip > 0) {
		return set.oldestFor(k, agent, skip)
	}
	if agent != "" {
		return set.randomFor(k, r, agent)
	}
	for len(set.recs) > 0 {
		var rec *slotRec
		if r < 0 {
			it, _ := set.tree.Min()
			rec = it.rec
		} else {
			rec = set.recs[set.index(r)]
		}
		if eligible(rec, k) {
			return rec, true
		}
		set.drop(rec)
	}
	return nil, false
}

// index maps r in [0,1) to a position in recs, which is not empty.
func (set *openSet) index(r float64) int {
	return min(int(r*float64(len(set.recs))), len(set.recs)-1)
}

// oldestFor walks the set in creation order from the oldest entry to the
// (skip+1)-th eligible one whose claim agent does not hold, or to the end,
// answering the last such entry met. A stale entry met on the way is
// dropped and the walk resumes where it was, so each step is a held claim's
// open slot (bounded), a skipped slot (at most skip) or a removal (once per
// entry).
func (set *openSet) oldestFor(k queueKey, agent string, skip int) (*slotRec, bool) {
	var found, stale *slotRec
	visit := func(it queueItem) bool {
		switch {
		case !eligible(it.rec, k):
			stale = it.rec
		case heldBy(it.rec, agent):
			return true
		default:
			found = it.rec
			if skip > 0 {
				skip--
				return true
			}
		}
		return false
	}
	set.tree.Ascend(visit)
	for stale != nil {
		from := queueItem{seq: stale.seq}
		set.drop(stale)
		stale = nil
		set.tree.AscendGreaterOrEqual(from, visit)
	}
	return found, found != nil
}

// randomFor starts at the position r picks and walks forward, wrapping
// around, to the first eligible entry whose claim agent does not hold:
// every such entry can be the answer. Stale entries met are dropped after
// the walk, which looks at each entry at most once.
func (set *openSet) randomFor(k queueKey, r float64, agent string) (*slotRec, bool) {
	n := len(set.recs)
	if n == 0 {
		return nil, false
	}
	var found *slotRec
	var stale []*slotRec
	for i, step := set.index(r), 0; step < n; i, step = (i+1)%n, step+1 {
		rec := set.recs[i]
		if !eligible(rec, k) {
			stale = append(stale, rec)
			continue
		}
		if !heldBy(rec, agent) {
			found = rec
			break
		}
	}
	for _, rec := range stale {
		set.drop(rec)
	}
	return found, found != nil
}
