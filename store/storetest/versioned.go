package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// versioned describes one kind of aggregate that a service saves with
// compare-and-set (an arena game, a Prism pipeline) to the contract every
// such kind keeps, on every backend: runVersioned checks it once for all.
type versioned[T any] struct {
	// kind names the subtests and the store's counted methods: "Game"
	// gives UpdateGameConflictHandsBackStored and GetGame, UpdateGame.
	kind string
	// action names the subtest of one round trip per action: "Argue"
	// gives ArgueIsOneRoundTrip.
	action string
	// conflict and notFound are the store's errors of a save from another
	// version and of a save of an aggregate that does not exist.
	conflict, notFound error
	missingID          string // an ID no aggregate has
	version            func(T) int64
	setVersion         func(*T, int64)
	setID              func(*T, string)
	clone              func(T) T
	// mark makes a save's change, tagged i; marked returns the tag of the
	// change an aggregate carries, or -1 when it carries none.
	mark   func(*T, int)
	marked func(T) int
	// stored starts a subtest of the store alone.
	stored func(t *testing.T) storedAggregate[T]
	// play starts a subtest of two service processes on one aggregate,
	// created through process creator (0 or 1), or through neither (-1).
	play func(t *testing.T, creator int) aggregatePlay[T]
}

// storedAggregate is one aggregate in a fresh store.
type storedAggregate[T any] struct {
	id  string
	get func(ctx context.Context, id string) (T, error)
	// save is the store's compare-and-set save, carrying the effects a
	// change saves with it, tagged tag, for a kind that has them.
	save func(ctx context.Context, next T, tag string) (T, error)
	// applied, for a kind whose saves carry effects, returns how many
	// saves' effects the store applied; nil for a kind without.
	applied func(t *testing.T) int64
}

// aggregatePlay is one aggregate played by two processes: services over
// one store, each seeing the store through a callCounter.
type aggregatePlay[T any] struct {
	calls [2]*callCounter
	// stored reads the aggregate, uncounted.
	stored func(t *testing.T) T
	// move makes the next valid change, as the stored aggregate stands,
	// through process p, and returns the saved aggregate.
	move func(t *testing.T, p int) T
	// refuse makes through process p an action the stored aggregate
	// refuses as a repeat (an agent arguing twice in a phase, a seat
	// taken twice), and asserts its error.
	refuse func(t *testing.T, p int)
	// stage says where an aggregate stands; the move that changes it ends
	// a phase. over says whether the aggregate takes no more moves.
	stage func(T) string
	over  func(T) bool
	// staleTail goes on with a stale-copy subtest after the shared steps,
	// with the kind's own case of a copy that is stale.
	staleTail func(t *testing.T)
	// landedOnce asserts that every move made is stored exactly once,
	// with its effects.
	landedOnce func(t *testing.T)
}

// runVersioned runs the compare-and-set contract for one kind of
// aggregate.
func runVersioned[T any](t *testing.T, k versioned[T]) {
	get, update := "Get"+k.kind, "Update"+k.kind
	ctx := context.Background()

	t.Run("Update"+k.kind+"ConflictHandsBackStored", func(t *testing.T) {
		t.Parallel()
		s := k.stored(t)
		stored, err := s.get(ctx, s.id)
		require.NoError(t, err)
		v := k.version(stored)

		// A save from a stale version, and one from a version not yet
		// reached: each fails, applies none of its effects and hands back
		// the stored aggregate.
		for _, version := range []int64{v, v - 1, v + 2} {
			next := k.clone(stored)
			k.setVersion(&next, version)
			k.mark(&next, 1)
			cur, err := s.save(ctx, next, fmt.Sprint("refused_", version))
			require.ErrorIs(t, err, k.conflict, "version %d", version)
			require.Equal(t, stored, cur, "version %d: the stored aggregate, as %s returns it", version, get)
		}
		again, err := s.get(ctx, s.id)
		require.NoError(t, err)
		require.Equal(t, stored, again, "a failed save changes nothing")
		requireApplied(t, s, 0, "a failed save applies no effect")

		next := k.clone(stored)
		k.setVersion(&next, v+1)
		k.mark(&next, 2)
		_, err = s.save(ctx, next, "landed")
		require.NoError(t, err)
		saved, err := s.get(ctx, s.id)
		require.NoError(t, err)
		require.Equal(t, v+1, k.version(saved))
		require.Equal(t, 2, k.marked(saved), "the saved change is stored")
		requireApplied(t, s, 1, "the save that lands applies its effects once")
		// The one that lost to it is handed back the new aggregate.
		lost := k.clone(stored)
		k.setVersion(&lost, v+1)
		k.mark(&lost, 3)
		cur, err := s.save(ctx, lost, "lost")
		require.ErrorIs(t, err, k.conflict)
		require.Equal(t, saved, cur)

		// A save never creates an aggregate, whatever the version says.
		for _, version := range []int64{1, 2} {
			missing := k.clone(stored)
			k.setID(&missing, k.missingID)
			k.setVersion(&missing, version)
			_, err = s.save(ctx, missing, fmt.Sprint("missing_", version))
			require.ErrorIs(t, err, k.notFound, "version %d", version)
			_, err = s.get(ctx, k.missingID)
			require.ErrorIs(t, err, k.notFound, "version %d", version)
		}
		requireApplied(t, s, 1, "a refused save applies no effect")
	})

	t.Run("RaceUpdate"+k.kind+"HandsBackWinner", func(t *testing.T) {
		t.Parallel()
		s := k.stored(t)
		for rep := 0; rep < raceRepeats; rep++ {
			base, err := s.get(ctx, s.id)
			require.NoError(t, err)
			var saved atomic.Int64
			concurrently(16, func(i int) {
				next := k.clone(base)
				k.setVersion(&next, k.version(base)+1)
				k.mark(&next, i)
				cur, err := s.save(ctx, next, fmt.Sprint("race_", rep, "_", i))
				switch {
				case err == nil:
					saved.Add(1)
				case !errors.Is(err, k.conflict):
					t.Error(err)
				case k.version(cur) != k.version(base)+1:
					// A loser that waited for the winner's save must see it,
					// not the aggregate as it was when the loser started.
					t.Errorf("a conflict handed back version %d, the stored one is %d", k.version(cur), k.version(base)+1)
				}
			})
			require.EqualValues(t, 1, saved.Load())
		}
		requireApplied(t, s, raceRepeats, "only the winners applied their effects")
	})

	t.Run(k.action+"IsOneRoundTrip", func(t *testing.T) {
		t.Parallel()
		pl := k.play(t, 0)
		a := pl.calls[0]
		a.take()
		oneSaveEach := func(why string) {
			for start := pl.stage(pl.stored(t)); pl.stage(pl.stored(t)) == start; {
				pl.move(t, 0)
				require.Equal(t, map[string]int{update: 1}, a.take(), why)
			}
		}
		oneSaveEach("each change follows this process's own: no read")

		// Another process moves the aggregate on: the first's remembered
		// copy is stale, the save fails and hands back the stored
		// aggregate, the next save lands; still no read.
		moved := pl.move(t, 1)
		got := pl.move(t, 0)
		require.Equal(t, map[string]int{update: 2}, a.take())
		require.Equal(t, k.version(moved)+1, k.version(got))
		// Having found its copy stale, the process reads first; this
		// action is refused by the stored aggregate: one read, no save.
		pl.refuse(t, 0)
		require.Equal(t, map[string]int{get: 1}, a.take())
		oneSaveEach("the read found the remembered copy current: one round trip again")
		pl.landedOnce(t)
	})

	t.Run("TwoProcessesAlternate", func(t *testing.T) {
		t.Parallel()
		pl := k.play(t, -1)
		last := pl.stored(t)
		for changes := 0; !pl.over(last); changes++ {
			p := changes % 2
			got := pl.move(t, p)
			require.Equal(t, k.version(last)+1, k.version(got), "change %d lands once", changes)
			last = got
			// The other process made the last change: never more than the
			// read and save of a process remembering nothing. Each process
			// finds its copy stale once (a save refused, handing back the
			// stored aggregate, or an action its copy refused), then reads
			// first: no whole aggregate sent in vain.
			n := pl.calls[p].take()
			require.Equal(t, 2, n[get]+n[update], "change %d: %v", changes, n)
			if changes >= 4 {
				require.Equal(t, map[string]int{get: 1, update: 1}, n, "change %d", changes)
			}
		}
		require.Equal(t, k.version(last), k.version(pl.stored(t)))
		pl.landedOnce(t)
	})

	t.Run("Stale"+k.kind+"NeverDecides", func(t *testing.T) {
		t.Parallel()
		pl := k.play(t, 0)
		pl.move(t, 0)
		// The second process ends the phase; the first still remembers it.
		moved := pl.stored(t)
		for start := pl.stage(moved); pl.stage(moved) == start; {
			moved = pl.move(t, 1)
		}
		pl.calls[0].take()
		pl.calls[1].take()

		// Refused on the first's stale copy, valid on the stored one: it
		// lands.
		got := pl.move(t, 0)
		require.Equal(t, k.version(moved)+1, k.version(got))
		require.Equal(t, map[string]int{get: 1, update: 1}, pl.calls[0].take())

		// Valid on the second's stale copy, refused on the stored one: the
		// stored aggregate's error, and nothing saved.
		pl.refuse(t, 1)
		require.Equal(t, map[string]int{update: 1}, pl.calls[1].take(), "the failed save handed back the stored aggregate")
		require.Equal(t, k.version(got), k.version(pl.stored(t)))

		pl.staleTail(t)
		pl.landedOnce(t)
	})
}

// requireApplied asserts how many saves' effects s applied, for a kind
// whose saves carry effects.
func requireApplied[T any](t *testing.T, s storedAggregate[T], want int64, why string) {
	t.Helper()
	if s.applied != nil {
		require.Equal(t, want, s.applied(t), why)
	}
}
