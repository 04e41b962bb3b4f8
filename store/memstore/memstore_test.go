package memstore_test

import (
	"testing"

	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/memstore"
	"github.com/agorahq/agora/store/storetest"
)

func newStores(*testing.T) storetest.Stores {
	s := memstore.New()
	return storetest.Stores{Slots: s, Identity: s, Discussion: s, Prism: s, Arena: s, AgentChat: s, Notifier: s, Peer: s, PeerChat: s,
		Limiters: func(perSecond float64, burst int) (storetest.Limiter, storetest.Limiter) {
			return s.Limiter(perSecond, burst), s.Limiter(perSecond, burst)
		}}
}

func TestConformance(t *testing.T) { storetest.Run(t, newStores) }

func newStore(*testing.B) slots.Store { return memstore.New() }

func BenchmarkTake(b *testing.B) { storetest.BenchmarkTake(b, newStore) }

func BenchmarkDoneAndTakeNext(b *testing.B) { storetest.BenchmarkDoneAndTakeNext(b, newStore) }

func BenchmarkFinishAndTakeNextSlots(b *testing.B) {
	storetest.BenchmarkFinishAndTakeNextSlots(b, newStore, nil, "")
}

func BenchmarkNextJob(b *testing.B) { storetest.BenchmarkNextJob(b, newStore, 100_000) }

func BenchmarkNextWork(b *testing.B) {
	storetest.BenchmarkNextWork(b, func(*testing.B) storetest.Stores {
		s := memstore.New()
		return storetest.Stores{Slots: s, Identity: s, Prism: s}
	}, 100_000)
}

func BenchmarkArgue(b *testing.B) {
	storetest.BenchmarkArgue(b, func(*testing.B) arena.Store { return memstore.New() })
}

func BenchmarkStageTake(b *testing.B) {
	storetest.BenchmarkStageTake(b, func(*testing.B) storetest.Stores {
		s := memstore.New()
		return storetest.Stores{Slots: s, Identity: s, Prism: s}
	})
}

func BenchmarkArgueLongGame(b *testing.B) {
	storetest.BenchmarkArgueLongGame(b, func(*testing.B) arena.Store { return memstore.New() }, 30, 50)
}
