// Package storetest is the one conformance suite that every Agora backend
// runs. A backend's test calls Run with a function returning fresh, isolated
// stores; the suite checks every behaviour the domain packages rely on,
// races included, so a behaviour that differs between backends fails here.
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) storetest.Stores {
//			s := memstore.New()
//			return storetest.Stores{Slots: s, Identity: s, Discussion: s, Prism: s,
//				Arena: s, AgentChat: s, Notifier: s, Peer: s}
//		})
//	}
package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/agorahq/agora/agentchat"
	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// Stores is what a backend provides to the suite: one implementation of each
// domain's store interface (usually the same value).
type Stores struct {
	Slots      slots.Store      // required by the Slots and Prism sections
	Identity   identity.Store   // required by the Identity section
	Discussion discussion.Store // required by the Discussion section
	Prism      prism.Store      // required by the Prism section
	Arena      arena.Store      // required by the Arena section
	AgentChat  agentchat.Store  // required by the AgentChat section
	// Notifier and Peer are two notifiers on the same backend, as two server
	// processes sharing it would have them (the same one for memstore).
	Notifier store.Notifier
	Peer     store.Notifier // see Notifier
	// PeerChat is the AgentChat store as another process sharing the
	// backend has it: its own connections (the same store for memstore).
	// Nil runs the cross-process checks against AgentChat.
	PeerChat agentchat.Store
	// CutPeer, when the backend's notifier holds a connection, cuts the
	// Peer's listening connection the way a network fault or a restarted
	// server would (nil for memory, which has none).
	CutPeer func(t *testing.T)
	// Limiters returns two rate limiters of perSecond requests a second
	// per key with bursts of burst, kept in the backend as two server
	// processes sharing it would have them (nil: the suite's limiter tests
	// are skipped).
	Limiters func(perSecond float64, burst int) (Limiter, Limiter)
}

// Limiter is a backend's per-key rate limit, the shape of httpapi.Limiter
// (declared again here so that the suite needs no edge).
type Limiter interface {
	Allow(ctx context.Context, key string) (ok bool, retryAfter time.Duration, err error)
}

// NewStores returns fresh stores isolated from every other call's: a new
// memory store, a new key prefix, a new schema. It registers its own cleanup
// with t.
type NewStores func(t *testing.T) Stores

// Run runs the whole suite.
func Run(t *testing.T, newStores NewStores) {
	t.Run("Slots", func(t *testing.T) { RunSlots(t, newStores) })
	t.Run("Identity", func(t *testing.T) { RunIdentity(t, newStores) })
	t.Run("Notifier", func(t *testing.T) { RunNotifier(t, newStores) })
	t.Run("Discussion", func(t *testing.T) { RunDiscussion(t, newStores) })
	t.Run("Prism", func(t *testing.T) { RunPrism(t, newStores) })
	t.Run("Arena", func(t *testing.T) { RunArena(t, newStores) })
	t.Run("AgentChat", func(t *testing.T) { RunAgentChat(t, newStores) })
	t.Run("Limiter", func(t *testing.T) { RunLimiter(t, newStores) })
}

// Races are repeated this many times each, so a window that only sometimes
// opens is likely to be seen.
const raceRepeats = 5

// concurrently runs fn(0) … fn(n-1) in n goroutines released at the same
// moment, and waits for them all: the shape of every race in the suite.
func concurrently(n int, fn func(i int)) {
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			fn(i)
		}()
	}
	close(start)
	wg.Wait()
}

// Clock is a settable clock for services under test.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock at a fixed, recent instant.
func NewClock() *Clock {
	return &Clock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
