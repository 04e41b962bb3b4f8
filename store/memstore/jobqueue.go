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

// pick returns the oldest eligible slot under k when r < 0, else a random
// one, dropping the stale entries it meets.
func (q *jobQueue) pick(k queueKey, r float64) (*slotRec, bool) {
	set := q.sets[k]
	if set == nil {
		return nil, false
	}
	for len(set.recs) > 0 {
		var rec *slotRec
		if r < 0 {
			it, _ := set.tree.Min()
			rec = it.rec
		} else {
			i := int(r * float64(len(set.recs)))
			if i >= len(set.recs) {
				i = len(set.recs) - 1
			}
			rec = set.recs[i]
		}
		if eligible(rec, k) {
			return rec, true
		}
		set.drop(rec)
	}
	return nil, false
}
