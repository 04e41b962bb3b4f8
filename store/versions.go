package store

import "sync"

// VersionsSize bounds how many aggregates a Versions remembers.
const VersionsSize = 1024

// Versions remembers the newest version of each aggregate a process saw
// saved, read or handed back by a refused compare-and-set, up to
// VersionsSize aggregates, forgetting an arbitrary one when full, and
// whether the last action on the aggregate found the one it remembered
// stale. A Service that saves aggregates with compare-and-set starts an
// action from the remembered aggregate instead of reading it (see
// arena.Service and prism.Service). The zero value is ready to use. Its
// values are never changed: the caller changes a deep copy.
type Versions[T any] struct {
	mu sync.Mutex
	m  map[string]versioned[T]
}

type versioned[T any] struct {
	value   T
	version int64
	moved   bool // the last action found the remembered aggregate stale
}

// Get returns the remembered aggregate with ID id, and whether the last
// action on it found the remembered one stale.
func (c *Versions[T]) Get(id string) (v T, moved, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[id]
	return e.value, e.moved, ok
}

// Put remembers v, at version, unless a newer version is remembered: two
// actions racing to put keep the newer aggregate. moved says whether the
// action that saw v found the remembered aggregate stale; it replaces the
// mark of the same version, and an older version only ever sets it.
func (c *Versions[T]) Put(id string, version int64, v T, moved bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[id]
	switch {
	case ok && e.version > version:
		if moved {
			e.moved = true
			c.m[id] = e
		}
		return
	case ok && e.version == version:
		e.moved = moved
		c.m[id] = e
		return
	case c.m == nil:
		c.m = make(map[string]versioned[T])
	case !ok && len(c.m) >= VersionsSize:
		for id := range c.m {
			delete(c.m, id)
			break
		}
	}
	c.m[id] = versioned[T]{value: v, version: version, moved: moved}
}

// Drop forgets the aggregate with ID id.
func (c *Versions[T]) Drop(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, id)
}

// Len returns how many aggregates are remembered.
func (c *Versions[T]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
