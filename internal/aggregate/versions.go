package aggregate

import "sync"

// versionsSize bounds how many aggregates a versions remembers.
const versionsSize = 1024

// versions remembers the newest version of each aggregate a process saw
// saved, read or handed back by a refused compare-and-set, up to
// versionsSize aggregates, forgetting an arbitrary one when full, and
// whether the last change of the aggregate found the one it remembered
// stale: the Saver starts a change from the remembered aggregate instead
// of reading it. The zero value is ready to use. Its values are never
// changed: the Saver changes a deep copy.
type versions[T any] struct {
	mu sync.Mutex
	m  map[string]versioned[T]
}

type versioned[T any] struct {
	value   T
	version int64
	moved   bool // the last change found the remembered aggregate stale
}

// get returns the remembered aggregate with ID id, and whether the last
// change of it found the remembered one stale.
func (c *versions[T]) get(id string) (v T, moved, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[id]
	return e.value, e.moved, ok
}

// put remembers v, at version, unless a newer version is remembered: two
// changes racing to put keep the newer aggregate. moved says whether the
// change that saw v found the remembered aggregate stale; it replaces the
// mark of the same version, and an older version only ever sets it.
func (c *versions[T]) put(id string, version int64, v T, moved bool) {
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
	case !ok && len(c.m) >= versionsSize:
		for id := range c.m {
			delete(c.m, id)
			break
		}
	}
	c.m[id] = versioned[T]{value: v, version: version, moved: moved}
}

// drop forgets the aggregate with ID id.
func (c *versions[T]) drop(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, id)
}

// len returns how many aggregates are remembered.
func (c *versions[T]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
