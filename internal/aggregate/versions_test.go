package aggregate

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVersionsKeepsTheNewestAndStaysBounded: an older or equal version
// never replaces the remembered one, the stale mark is set and cleared as
// documented, and the cache never holds more than versionsSize.
func TestVersionsKeepsTheNewestAndStaysBounded(t *testing.T) {
	var c versions[doc]
	put := func(d doc, moved bool) { c.put(d.ID, d.Version, d, moved) }
	_, _, ok := c.get("g")
	require.False(t, ok)
	put(doc{ID: "g", Version: 3, Note: "first"}, false)
	put(doc{ID: "g", Version: 2, Note: "older"}, false)
	put(doc{ID: "g", Version: 3, Note: "same version"}, false)
	d, moved, ok := c.get("g")
	require.True(t, ok)
	require.False(t, moved)
	require.Equal(t, doc{ID: "g", Version: 3, Note: "first"}, d, "an older or equal version never replaces the remembered one")

	// The stale mark: set by any change that found it, cleared by one
	// that saw the remembered version or a newer one and found nothing.
	put(doc{ID: "g", Version: 2}, true)
	_, moved, _ = c.get("g")
	require.True(t, moved)
	put(doc{ID: "g", Version: 2}, false)
	_, moved, _ = c.get("g")
	require.True(t, moved, "an older aggregate never clears the mark")
	put(doc{ID: "g", Version: 3}, false)
	_, moved, _ = c.get("g")
	require.False(t, moved)
	put(doc{ID: "g", Version: 4}, true)
	d, moved, _ = c.get("g")
	require.EqualValues(t, 4, d.Version)
	require.True(t, moved)
	put(doc{ID: "g", Version: 5}, false)
	_, moved, _ = c.get("g")
	require.False(t, moved)

	c.drop("g")
	_, _, ok = c.get("g")
	require.False(t, ok)

	for i := range 3 * versionsSize {
		put(doc{ID: fmt.Sprint("g-", i), Version: 1}, false)
		require.LessOrEqual(t, c.len(), versionsSize)
	}
	_, _, ok = c.get(fmt.Sprint("g-", 3*versionsSize-1))
	require.True(t, ok, "the aggregate just put is remembered")
}

// TestVersionsRacingPutsKeepTheNewest: goroutines putting versions 1..64
// of one aggregate in any order leave version 64 (under -race).
func TestVersionsRacingPutsKeepTheNewest(t *testing.T) {
	var c versions[doc]
	var wg sync.WaitGroup
	for v := int64(64); v >= 1; v-- {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.put("g", v, doc{ID: "g", Version: v}, false)
			_, _, _ = c.get("g")
		}()
	}
	wg.Wait()
	d, _, ok := c.get("g")
	require.True(t, ok)
	require.EqualValues(t, 64, d.Version)
}
