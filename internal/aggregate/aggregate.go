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

// Aggregate is what a Saver needs of an aggregate of type T: its identity
// and version, a copy at another version, and a deep copy, which a change
// may modify freely.
type Aggregate[T any] interface {
	AggregateID() string
	AggregateVersion() int64
	WithVersion(v int64) T
	Clone() T
}

// Store is where aggregates of type T live, saved together with the
// effects E of their changes (struct{} for none).
type Store[T, E any] interface {
	// Load reads the stored aggregate with ID id.
	Load(ctx context.Context, id string) (T, error)
	// Save stores next, with fx, when the stored aggregate's version is
	// next's minus one. Otherwise it stores nothing and returns an error
	// matching the Saver's conflict error together with the stored
	// aggregate when it has it (a zero or older value is ignored).
	Save(ctx context.Context, next T, fx E) (stored T, err error)
}

// Saver saves changes of one kind of aggregate (see Change). It is safe
// for concurrent use.
type Saver[T Aggregate[T], E any] struct {
	store    Store[T, E]
	conflict error
	seen     versions[T]
}

// New returns a Saver of the aggregates in st; conflict is the error of a
// save st refused because the version moved.
func New[T Aggregate[T], E any](st Store[T, E], conflict error) *Saver[T, E] {
	return &Saver[T, E]{store: st, conflict: conflict}
}

// Change applies fn to a copy of the aggregate with ID id and saves it with
// the effects fn returns, retrying when another change was saved first,
// and returns the saved aggregate, the caller's to keep: whatever follows
// a saved change (announcing it, observing it) is the caller's, once
// Change has returned. It starts from the remembered aggregate when there is one, else
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
	base, moved, known := s.seen.get(id)
	remembered := known // base is the remembered aggregate
	if moved {
		known = false
	}
	current := false // base is the stored aggregate as of this change
	stale := false   // this change found the remembered aggregate stale
	var saved T
	err := retryOnConflict(ctx, s.conflict, func() error {
		for {
			if !known {
				v, err := s.store.Load(ctx, id)
				if err != nil {
					return err
				}
				stale = stale || remembered && v.AggregateVersion() != base.AggregateVersion()
				s.seen.put(id, v.AggregateVersion(), v, stale)
				base, known, current, remembered = v, true, true, false
			}
			next := base.Clone()
			fx, err := fn(&next)
			if err != nil {
				if current {
					return err
				}
				known = false // the remembered aggregate may be stale: ask the store
				continue
			}
			next = next.WithVersion(base.AggregateVersion() + 1)
			stored, err := s.store.Save(ctx, next, fx)
			switch {
			case err == nil:
				saved = next
				s.seen.put(id, next.AggregateVersion(), next.Clone(), stale) // the caller owns saved
				return nil
			case errors.Is(err, s.conflict) && stored.AggregateID() == id && stored.AggregateVersion() > base.AggregateVersion():
				stale = true
				s.seen.put(id, stored.AggregateVersion(), stored, true)
				base, current, remembered = stored, true, false
			case errors.Is(err, s.conflict):
				known = false // no usable aggregate handed back: read it
			default:
				s.seen.drop(id)
			}
			return err
		}
	})
	return saved, err
}

// Remember records v, just created or read by the caller, as the newest
// version of its aggregate this process has seen; the caller keeps v.
func (s *Saver[T, E]) Remember(v T) {
	s.seen.put(v.AggregateID(), v.AggregateVersion(), v.Clone(), false)
}

// At returns the aggregate with ID id at version minVersion or later: the
// remembered one when it is that recent, else the stored one, which is
// then remembered. Many readers following an aggregate's changes in one
// process read it from the store at most once per change, and not at all
// when this process made the change. The result is the caller's to keep.
func (s *Saver[T, E]) At(ctx context.Context, id string, minVersion int64) (T, error) {
	if v, _, ok := s.seen.get(id); ok && v.AggregateVersion() >= minVersion {
		return v.Clone(), nil
	}
	v, err := s.store.Load(ctx, id)
	if err == nil {
		s.Remember(v)
	}
	return v, err
}
