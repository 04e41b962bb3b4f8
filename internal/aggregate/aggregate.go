// Package aggregate saves aggregates with compare-and-set: a game of the
// arena, a pipeline of Prism. A Saver applies a change to a copy of the
// aggregate and saves it if the stored version did not move, retrying on
// the stored one when it did, and remembers the last version it saw of
// each aggregate so that a process making an aggregate's consecutive
// changes saves each in one round trip, without reading first.
package aggregate

import (
	"context"
	"errors"
)

// ErrNothing is what a change returns when the aggregate needs none (a
// sweep finding nothing due): Change then saves nothing and returns it,
// once the stored aggregate agrees, so callers tell "nothing to do" from
// a failure with errors.Is.
var ErrNothing = errors.New("nothing to change")

// Config is what a Saver needs of one kind of aggregate T, whose changes
// produce effects E saved with them (struct{} for none).
type Config[T, E any] struct {
	// Load reads the stored aggregate with ID id.
	Load func(ctx context.Context, id string) (T, error)
	// Save stores next, with fx, when the stored aggregate's version is
	// next's minus one. Otherwise it stores nothing and returns an error
	// matching Conflict together with the stored aggregate when it has it
	// (a zero or older value is ignored).
	Save func(ctx context.Context, next T, fx E) (stored T, err error)
	// Conflict is the error of a save refused because the version moved.
	Conflict error
	// ID, Version and SetVersion read and set an aggregate's identity and
	// version.
	ID         func(T) string
	Version    func(T) int64
	SetVersion func(*T, int64)
	// Clone returns a deep copy, which a change may modify freely.
	Clone func(T) T
	// Announce, when set, is told of each saved change, after the save;
	// saved is Change's caller's, not to be kept past the call.
	Announce func(ctx context.Context, saved T)
}

// Saver saves changes of one kind of aggregate (see Change). It is safe
// for concurrent use.
type Saver[T, E any] struct {
	cfg  Config[T, E]
	seen versions[T]
}

// New returns a Saver configured by cfg; every field but Announce is
// required.
func New[T, E any](cfg Config[T, E]) *Saver[T, E] { return &Saver[T, E]{cfg: cfg} }

// Change applies fn to a copy of the aggregate with ID id and saves it with
// the effects fn returns, retrying when another change was saved first; a
// saved change is announced, and the saved aggregate is the caller's to
// keep. It starts from the remembered aggregate when there is one, else
// reads it; a conflict hands back the stored aggregate, the next
// attempt's base. fn's error is returned only when fn refused an aggregate
// known to be the stored one (read, or handed back by a conflict), never
// for a remembered one alone: a stale copy never turns a valid change into
// an error, nor lets an invalid one through.
//
// When the last change of the aggregate found the remembered one stale
// (other processes change it too), Change reads first instead: a save from
// a stale copy costs as many round trips as a read and a save, but encodes
// and sends the whole aggregate once more. A change that reads and finds
// the remembered version unchanged lets the next one save at once again.
func (s *Saver[T, E]) Change(ctx context.Context, id string, fn func(next *T) (E, error)) (T, error) {
	c := s.cfg
	base, moved, known := s.seen.get(id)
	remembered := known // base is the remembered aggregate
	if moved {
		known = false
	}
	current := false // base is the stored aggregate as of this change
	stale := false   // this change found the remembered aggregate stale
	var saved T
	err := retryOnConflict(ctx, c.Conflict, func() error {
		for {
			if !known {
				v, err := c.Load(ctx, id)
				if err != nil {
					return err
				}
				stale = stale || remembered && c.Version(v) != c.Version(base)
				s.seen.put(id, c.Version(v), v, stale)
				base, known, current, remembered = v, true, true, false
			}
			next := c.Clone(base)
			fx, err := fn(&next)
			if err != nil {
				if current {
					return err
				}
				known = false // the remembered aggregate may be stale: ask the store
				continue
			}
			c.SetVersion(&next, c.Version(base)+1)
			stored, err := c.Save(ctx, next, fx)
			switch {
			case err == nil:
				saved = next
				s.seen.put(id, c.Version(next), c.Clone(next), stale) // the caller owns saved
				return nil
			case errors.Is(err, c.Conflict) && c.ID(stored) == id && c.Version(stored) > c.Version(base):
				stale = true
				s.seen.put(id, c.Version(stored), stored, true)
				base, current, remembered = stored, true, false
			case errors.Is(err, c.Conflict):
				known = false // no usable aggregate handed back: read it
			default:
				s.seen.drop(id)
			}
			return err
		}
	})
	if err == nil && c.Announce != nil {
		c.Announce(ctx, saved)
	}
	return saved, err
}

// Remember records v, just created or read by the caller, as the newest
// version of its aggregate this process has seen; the caller keeps v.
func (s *Saver[T, E]) Remember(v T) {
	s.seen.put(s.cfg.ID(v), s.cfg.Version(v), s.cfg.Clone(v), false)
}

// At returns the aggregate with ID id at version minVersion or later: the
// remembered one when it is that recent, else the stored one, which is
// then remembered. Many readers following an aggregate's changes in one
// process read it from the store at most once per change, and not at all
// when this process made the change. The result is the caller's to keep.
func (s *Saver[T, E]) At(ctx context.Context, id string, minVersion int64) (T, error) {
	if v, _, ok := s.seen.get(id); ok && s.cfg.Version(v) >= minVersion {
		return s.cfg.Clone(v), nil
	}
	v, err := s.cfg.Load(ctx, id)
	if err == nil {
		s.Remember(v)
	}
	return v, err
}
