package aggregate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// doc stands for an aggregate saved with compare-and-set (a game, a
// pipeline); Items makes a shallow copy visible.
type doc struct {
	ID      string
	Version int64
	Note    string
	Items   []string
}

func (d doc) Clone() doc {
	d.Items = slices.Clone(d.Items)
	return d
}

func (d doc) AggregateID() string     { return d.ID }
func (d doc) AggregateVersion() int64 { return d.Version }
func (d doc) WithVersion(v int64) doc { d.Version = v; return d }

var (
	errConflict = errors.New("version moved")
	errNotFound = errors.New("no such doc")
	errDown     = errors.New("store down")
	errRefused  = errors.New("the change is refused")
)

// fakeStore keeps docs as a backend does (a refused save hands back the
// stored doc) and lets a test break that: hand back nothing usable, have
// another writer save first, fail a load or a save. Effects are strings,
// recorded in the order their saves landed.
type fakeStore struct {
	mu       sync.Mutex
	docs     map[string]doc
	applied  []string
	handBack func(stored doc) doc // what a refused save hands back
	interfer int                  // saves that another writer beats
	saveErr  error                // the next save's error
	loadErr  error                // the next load's error
}

func newFakeStore(docs ...doc) *fakeStore {
	f := &fakeStore{docs: map[string]doc{}}
	for _, d := range docs {
		f.docs[d.ID] = d.Clone()
	}
	return f
}

func (f *fakeStore) load(_ context.Context, id string) (doc, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.loadErr; err != nil {
		f.loadErr = nil
		return doc{}, err
	}
	d, ok := f.docs[id]
	if !ok {
		return doc{}, errNotFound
	}
	return d.Clone(), nil
}

func (f *fakeStore) save(_ context.Context, next doc, fx string) (doc, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.saveErr; err != nil {
		f.saveErr = nil
		return doc{}, err
	}
	cur, ok := f.docs[next.ID]
	if !ok {
		return doc{}, errNotFound
	}
	if f.interfer > 0 {
		f.interfer--
		cur.Version++
		cur.Items = append(slices.Clone(cur.Items), "other")
		f.docs[cur.ID] = cur
		f.applied = append(f.applied, "other")
	}
	if cur.Version != next.Version-1 {
		if f.handBack != nil {
			return f.handBack(cur.Clone()), errConflict
		}
		return cur.Clone(), fmt.Errorf("saving %s: %w", next.ID, errConflict)
	}
	f.docs[next.ID] = next.Clone()
	f.applied = append(f.applied, fx)
	return doc{}, nil
}

// set changes the fake under its lock.
func (f *fakeStore) set(fn func(f *fakeStore)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *fakeStore) stored(t *testing.T, id string) doc {
	t.Helper()
	d, err := f.load(context.Background(), id)
	require.NoError(t, err)
	return d
}

// process is one server process's saver over the shared fake store,
// counting its round trips, and announcing each change its saver saved
// as a service does, once Change returned.
type process struct {
	saver     *Saver[doc, string]
	store     *fakeStore
	loads     atomic.Int64
	saves     atomic.Int64
	mu        sync.Mutex
	announced []doc
}

func newProcess(f *fakeStore) *process {
	p := &process{store: f}
	p.saver = New[doc, string](p, errConflict)
	return p
}

// Load counts a round trip and loads from the shared store.
func (p *process) Load(ctx context.Context, id string) (doc, error) {
	p.loads.Add(1)
	return p.store.load(ctx, id)
}

// Save counts a round trip and saves to the shared store.
func (p *process) Save(ctx context.Context, next doc, fx string) (doc, error) {
	p.saves.Add(1)
	return p.store.save(ctx, next, fx)
}

// change is the saver's Change, the saved doc announced after it.
func (p *process) change(ctx context.Context, id string, fn func(next *doc) (string, error)) (doc, error) {
	saved, err := p.saver.Change(ctx, id, fn)
	if err == nil {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.announced = append(p.announced, saved.Clone()) // saved is the caller's
	}
	return saved, err
}

// trips returns the loads and saves since the last call.
func (p *process) trips() (loads, saves int64) {
	return p.loads.Swap(0), p.saves.Swap(0)
}

// twoProcesses returns a store holding doc d at version 1 and two
// processes over it, the first remembering d.
func twoProcesses() (f *fakeStore, a, b *process) {
	f = newFakeStore(doc{ID: "d", Version: 1})
	a, b = newProcess(f), newProcess(f)
	a.saver.Remember(doc{ID: "d", Version: 1})
	return f, a, b
}

// requireTrips asserts the loads and saves since the last trips.
func (p *process) requireTrips(t *testing.T, loads, saves int64, msgAndArgs ...any) {
	t.Helper()
	l, s := p.trips()
	require.Equal(t, [2]int64{loads, saves}, [2]int64{l, s}, msgAndArgs...)
}

func (p *process) announcements() []doc {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.announced)
}

// add is a change appending item, with item as its effect.
func add(item string) func(d *doc) (string, error) {
	return func(d *doc) (string, error) {
		d.Items = append(d.Items, item)
		return item, nil
	}
}

// addOnce is add refused when item is there already.
func addOnce(item string) func(d *doc) (string, error) {
	return func(d *doc) (string, error) {
		if slices.Contains(d.Items, item) {
			return "", errRefused
		}
		return add(item)(d)
	}
}

// TestChangeFromTheRememberedDocIsOneSave: a process making a doc's
// consecutive changes saves each without reading; a doc it does not
// remember is read once. Each saved change is announced, and the caller
// owns what Change returns.
func TestChangeFromTheRememberedDocIsOneSave(t *testing.T) {
	ctx := t.Context()
	f := newFakeStore(doc{ID: "d", Version: 1}, doc{ID: "e", Version: 7})
	p := newProcess(f)
	p.saver.Remember(doc{ID: "d", Version: 1})
	for i := range 3 {
		got, err := p.change(ctx, "d", add(fmt.Sprint("item-", i)))
		require.NoError(t, err)
		require.EqualValues(t, 2+i, got.Version)
		p.requireTrips(t, 0, 1, "change %d: one save, no read", i)
		got.Items[0] = "scribbled by the caller"
	}
	stored := f.stored(t, "d")
	require.Equal(t, doc{ID: "d", Version: 4, Items: []string{"item-0", "item-1", "item-2"}}, stored,
		"the caller's copy is not the remembered one")
	require.Equal(t, []string{"item-0", "item-1", "item-2"}, f.applied)
	require.Len(t, p.announcements(), 3)
	require.Equal(t, stored, p.announcements()[2])

	_, err := p.change(ctx, "e", add("x"))
	require.NoError(t, err)
	p.requireTrips(t, 1, 1, "a doc not remembered is read first")
	_, err = p.change(ctx, "e", add("y"))
	require.NoError(t, err)
	p.requireTrips(t, 0, 1)
}

// TestChangeFromAStaleDocRetriesOnTheStoredOne: another process saved
// first; the save is refused and hands back the stored doc, which the
// change is applied to. The next change reads first; finding the
// remembered version current, the one after saves at once again.
func TestChangeFromAStaleDocRetriesOnTheStoredOne(t *testing.T) {
	ctx := t.Context()
	f, a, b := twoProcesses()
	_, err := b.change(ctx, "d", add("b"))
	require.NoError(t, err)

	got, err := a.change(ctx, "d", add("a"))
	require.NoError(t, err)
	require.Equal(t, doc{ID: "d", Version: 3, Items: []string{"b", "a"}}, got)
	a.requireTrips(t, 0, 2, "the refused save handed back the stored doc: no read")
	require.Equal(t, []doc{got}, a.announcements(), "only the save that landed is announced")

	_, err = a.change(ctx, "d", add("a2"))
	require.NoError(t, err)
	a.requireTrips(t, 1, 1, "having found its doc stale, the process reads first")
	_, err = a.change(ctx, "d", add("a3"))
	require.NoError(t, err)
	a.requireTrips(t, 0, 1, "the read found the remembered doc current")

	// The read finds it moved again: the mark stays, the next reads too.
	_, err = b.change(ctx, "d", add("b2"))
	require.NoError(t, err)
	f.set(func(f *fakeStore) { f.interfer = 1 })
	_, err = a.change(ctx, "d", add("a4"))
	require.NoError(t, err)
	a.requireTrips(t, 0, 2)
	_, err = b.change(ctx, "d", add("b3"))
	require.NoError(t, err)
	_, err = a.change(ctx, "d", add("a5"))
	require.NoError(t, err)
	a.requireTrips(t, 1, 1)
	_, err = b.change(ctx, "d", add("b4"))
	require.NoError(t, err)
	_, err = a.change(ctx, "d", add("a6"))
	require.NoError(t, err)
	a.requireTrips(t, 1, 1, "the last read found the doc moved: read first again")
	require.Equal(t, []string{"b", "a", "a2", "a3", "b2", "other", "a4", "b3", "a5", "b4", "a6"}, f.stored(t, "d").Items)
	require.Equal(t, f.stored(t, "d").Items, f.applied, "every effect applied once, in order")
}

// TestChangeConflictWithoutUsableStoredReads: a refused save that hands
// back nothing, an older doc or another doc is followed by a read.
func TestChangeConflictWithoutUsableStoredReads(t *testing.T) {
	ctx := t.Context()
	for name, handBack := range map[string]func(doc) doc{
		"nothing":   func(doc) doc { return doc{} },
		"older":     func(d doc) doc { d.Version = 1; return d },
		"other doc": func(d doc) doc { d.ID = "e"; return d },
	} {
		t.Run(name, func(t *testing.T) {
			f, a, b := twoProcesses()
			f.set(func(f *fakeStore) { f.handBack = handBack })
			_, err := b.change(ctx, "d", add("b"))
			require.NoError(t, err)
			a.trips()
			got, err := a.change(ctx, "d", add("a"))
			require.NoError(t, err)
			require.Equal(t, doc{ID: "d", Version: 3, Items: []string{"b", "a"}}, got)
			a.requireTrips(t, 1, 2)
		})
	}
}

// TestChangeRefusedOnlyByTheStoredDoc: fn's error comes back only when
// the stored doc refuses the change; a remembered doc refusing it is read
// again first, and a stale remembered doc accepting it never saves it.
func TestChangeRefusedOnlyByTheStoredDoc(t *testing.T) {
	ctx := t.Context()
	f, a, b := twoProcesses()
	_, err := a.change(ctx, "d", add("x"))
	require.NoError(t, err)
	b.saver.Remember(f.stored(t, "d"))
	a.trips()

	// Refused on the remembered doc, which is current: the read confirms.
	_, err = a.change(ctx, "d", addOnce("x"))
	require.ErrorIs(t, err, errRefused)
	a.requireTrips(t, 1, 0)

	// Refused on a's stale doc (x removed since), valid on the stored one.
	_, err = b.change(ctx, "d", func(d *doc) (string, error) {
		d.Items = slices.DeleteFunc(d.Items, func(s string) bool { return s == "x" })
		return "removed x", nil
	})
	require.NoError(t, err)
	got, err := a.change(ctx, "d", addOnce("x"))
	require.NoError(t, err)
	require.Equal(t, []string{"x"}, got.Items)
	a.requireTrips(t, 1, 1)

	// Valid on b's stale doc (without x), refused on the stored one: the
	// refused save hands back the stored doc, which refuses; nothing saved.
	before := f.stored(t, "d")
	b.trips()
	_, err = b.change(ctx, "d", addOnce("x"))
	require.ErrorIs(t, err, errRefused)
	b.requireTrips(t, 0, 1)
	require.Equal(t, before, f.stored(t, "d"))
	require.Len(t, b.announcements(), 1, "a refused change is not announced")

	// A doc no process remembers: read, refused.
	c := newProcess(f)
	_, err = c.change(ctx, "d", addOnce("x"))
	require.ErrorIs(t, err, errRefused)
	c.requireTrips(t, 1, 0)
}

// TestChangeErrNothing: ErrNothing from the stored doc saves and
// announces nothing and comes back as itself; from a stale remembered doc
// it is tried on the stored one, which may need the change.
func TestChangeErrNothing(t *testing.T) {
	ctx := t.Context()
	f, a, b := twoProcesses()
	dueOnce := func(d *doc) (string, error) {
		if len(d.Items) == 0 || slices.Contains(d.Items, "swept") {
			return "", ErrNothing
		}
		return add("swept")(d)
	}
	_, err := a.change(ctx, "d", dueOnce)
	require.ErrorIs(t, err, ErrNothing)
	a.requireTrips(t, 1, 0)

	_, err = b.change(ctx, "d", add("due"))
	require.NoError(t, err)
	got, err := a.change(ctx, "d", dueOnce)
	require.NoError(t, err, "nothing to do on the stale doc only")
	require.Equal(t, []string{"due", "swept"}, got.Items)
	_, err = b.change(ctx, "d", dueOnce)
	require.ErrorIs(t, err, ErrNothing, "b's stale doc is due, the stored one was swept")
	require.Len(t, a.announcements(), 1)
	require.Len(t, b.announcements(), 1)
	require.Equal(t, []string{"due", "swept"}, f.applied)
}

// TestChangeStoreErrors: a failed load or save comes back as itself; a
// failed save forgets the remembered doc, so the next change reads it.
func TestChangeStoreErrors(t *testing.T) {
	ctx := t.Context()
	f := newFakeStore(doc{ID: "d", Version: 1})
	a := newProcess(f)
	_, err := a.change(ctx, "missing", add("x"))
	require.ErrorIs(t, err, errNotFound)

	f.set(func(f *fakeStore) { f.loadErr = errDown })
	_, err = a.change(ctx, "d", add("x"))
	require.ErrorIs(t, err, errDown)

	_, err = a.change(ctx, "d", add("x"))
	require.NoError(t, err)
	a.trips()
	f.set(func(f *fakeStore) { f.saveErr = errDown })
	_, err = a.change(ctx, "d", add("y"))
	require.ErrorIs(t, err, errDown)
	a.requireTrips(t, 0, 1)
	_, err = a.change(ctx, "d", add("y"))
	require.NoError(t, err)
	a.requireTrips(t, 1, 1, "the failed save forgot the remembered doc")
	require.Len(t, a.announcements(), 2)
}

// TestChangeStopsWhenTheContextEnds: a doc that every save loses on is
// given up when ctx ends, with ctx's error and nothing announced.
func TestChangeStopsWhenTheContextEnds(t *testing.T) {
	ctx := t.Context()
	f := newFakeStore(doc{ID: "d", Version: 1})
	f.set(func(f *fakeStore) { f.interfer = 1 << 30 })
	a := newProcess(f)
	c, cancel := context.WithCancel(ctx)
	cancel()
	_, err := a.change(c, "d", add("x"))
	require.ErrorIs(t, err, context.Canceled)
	require.Empty(t, a.announcements())
	require.NotContains(t, f.stored(t, "d").Items, "x")
}

// TestAt: the remembered doc answers when it is recent enough; else the
// stored one is read and remembered. Both are the caller's to keep.
func TestAt(t *testing.T) {
	ctx := t.Context()
	f := newFakeStore(doc{ID: "d", Version: 1, Items: []string{"a"}})
	a, b := newProcess(f), newProcess(f)
	a.saver.Remember(doc{ID: "d", Version: 1, Items: []string{"a"}})
	got, err := a.saver.At(ctx, "d", 1)
	require.NoError(t, err)
	require.EqualValues(t, 1, got.Version)
	got.Items[0] = "scribbled"
	loads, _ := a.trips()
	require.Zero(t, loads)

	_, err = b.change(ctx, "d", add("b"))
	require.NoError(t, err)
	for range 2 {
		got, err = a.saver.At(ctx, "d", 2)
		require.NoError(t, err)
		require.Equal(t, doc{ID: "d", Version: 2, Items: []string{"a", "b"}}, got)
		got.Items[0] = "scribbled"
	}
	loads, _ = a.trips()
	require.EqualValues(t, 1, loads, "the stored doc is read once, then remembered")
	_, err = a.saver.At(ctx, "missing", 0)
	require.ErrorIs(t, err, errNotFound)
}

// TestChangeRacingProcesses: goroutines of several processes changing one
// doc land every change exactly once, each with its effect, whatever the
// remembered docs say (under -race).
func TestChangeRacingProcesses(t *testing.T) {
	ctx := t.Context()
	const procs, workers, changes = 3, 8, 20
	for rep := range 5 {
		f := newFakeStore(doc{ID: "d", Version: 1})
		ps := make([]*process, procs)
		for i := range ps {
			ps[i] = newProcess(f)
		}
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range changes {
					item := fmt.Sprint(w, "-", i)
					if _, err := ps[(w+i)%procs].change(ctx, "d", addOnce(item)); err != nil {
						t.Error(err)
					}
				}
			}()
		}
		wg.Wait()
		stored := f.stored(t, "d")
		require.EqualValues(t, 1+workers*changes, stored.Version, "rep %d", rep)
		require.Len(t, stored.Items, workers*changes)
		require.Equal(t, stored.Items, f.applied, "each effect once, with its save")
		announced := 0
		for _, p := range ps {
			announced += len(p.announcements())
		}
		require.Equal(t, workers*changes, announced)
	}
}
