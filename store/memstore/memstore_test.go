package memstore_test

import (
	"testing"

	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/memstore"
	"github.com/agorahq/agora/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Stores {
		s := memstore.New()
		return storetest.Stores{Slots: s}
	})
}

func BenchmarkTake(b *testing.B) { storetest.BenchmarkTake(b, memstore.New()) }

func BenchmarkNextJob(b *testing.B) {
	storetest.BenchmarkNextJob(b, func(*testing.B) slots.Store { return memstore.New() }, 100_000)
}
