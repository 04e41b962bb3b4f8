package memstore_test

import (
	"testing"

	"github.com/agorahq/agora/store/memstore"
	"github.com/agorahq/agora/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Stores {
		s := memstore.New()
		return storetest.Stores{Slots: s}
	})
}
