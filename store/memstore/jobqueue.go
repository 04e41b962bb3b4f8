package memstore

import (
	"github.com/agorahq/agora/slots"
	"github.com/google/btree"
)

// The job queue indexes open slots of claims that have a draft, under four
// keys per slot (all, by role, by domain, by domain and role), so that every
// filter combination of NextOpenSlot finds its answer without a scan.

type queueKey struct {
	role   slots.Role
	domain string
}

// openSet is one index: a B-tree by ID for "oldest", and a slice with
// swap-removal for a uniform random pick in O(1).
type openSet struct {
	tree *btree.BTreeG[string]
	ids  []string
	pos  map[string]int
}

type jobQueue struct {
	sets map[queueKey]*openSet
}

func keysOf(sl *slots.Slot, domain string) [4]queueKey {
	return [4]queueKey{{}, {role: sl.Role}, {domain: domain}, {role: sl.Role, domain: domain}}
}

func (q *jobQueue) add(sl *slots.Slot, domain string) {
	for _, k := range keysOf(sl, domain) {
		set := q.sets[k]
		if set == nil {
			set = &openSet{tree: btree.NewOrderedG[string](16), pos: map[string]int{}}
			q.sets[k] = set
		}
		if _, ok := set.pos[sl.ID]; ok {
			continue
		}
		set.tree.ReplaceOrInsert(sl.ID)
		set.pos[sl.ID] = len(set.ids)
		set.ids = append(set.ids, sl.ID)
	}
}

func (q *jobQueue) remove(sl *slots.Slot, domain string) {
	for _, k := range keysOf(sl, domain) {
		set := q.sets[k]
		if set == nil {
			continue
		}
		i, ok := set.pos[sl.ID]
		if !ok {
			continue
		}
		set.tree.Delete(sl.ID)
		last := len(set.ids) - 1
		set.ids[i] = set.ids[last]
		set.pos[set.ids[i]] = i
		set.ids = set.ids[:last]
		delete(set.pos, sl.ID)
		if last == 0 {
			delete(q.sets, k)
		}
	}
}

// pick returns the oldest slot ID under k when r < 0, else a random one.
func (q *jobQueue) pick(k queueKey, r float64) (string, bool) {
	set := q.sets[k]
	if set == nil || len(set.ids) == 0 {
		return "", false
	}
	if r < 0 {
		return set.tree.Min()
	}
	i := int(r * float64(len(set.ids)))
	if i >= len(set.ids) {
		i = len(set.ids) - 1
	}
	return set.ids[i], true
}
