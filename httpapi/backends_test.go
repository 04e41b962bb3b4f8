package httpapi_test

import (
	"os"
	"testing"

	"github.com/agorahq/agora/internal/testdb"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/memstore"
)

func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

// backend makes a fresh, isolated slots.Store for one test.
type backend struct {
	name string
	new  func(t *testing.T) slots.Store
}

// backends lists every backend the HTTP tests run against: each route must
// answer the same on all of them.
func backends() []backend {
	return []backend{
		{"memstore", func(t *testing.T) slots.Store { return memstore.New() }},
	}
}

// forEachBackend runs test once per backend, in parallel.
func forEachBackend(t *testing.T, test func(t *testing.T, st slots.Store)) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			test(t, b.new(t))
		})
	}
}
