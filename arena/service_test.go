package arena

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/store"
)

// TestGameCacheKeepsTheNewestAndStaysBounded checks the cache a Service
// remembers its games in (store.Versions).
func TestGameCacheKeepsTheNewestAndStaysBounded(t *testing.T) {
	var c store.Versions[Game]
	put := func(g Game, moved bool) { c.Put(g.ID, g.Version, g, moved) }
	_, _, ok := c.Get("g")
	require.False(t, ok)
	put(Game{ID: "g", Version: 3, Status: StatusPhase1}, false)
	put(Game{ID: "g", Version: 2, Status: StatusWaiting}, false)
	put(Game{ID: "g", Version: 3, Status: StatusPhase2}, false)
	g, moved, ok := c.Get("g")
	require.True(t, ok)
	require.False(t, moved)
	require.Equal(t, Game{ID: "g", Version: 3, Status: StatusPhase1}, g, "an older or equal version never replaces the remembered one")

	// The stale mark: set by any action that found it, cleared by one
	// that saw the remembered version or a newer one and found nothing.
	put(Game{ID: "g", Version: 2}, true)
	_, moved, _ = c.Get("g")
	require.True(t, moved)
	put(Game{ID: "g", Version: 2}, false)
	_, moved, _ = c.Get("g")
	require.True(t, moved, "an older game never clears the mark")
	put(Game{ID: "g", Version: 3}, false)
	_, moved, _ = c.Get("g")
	require.False(t, moved)
	put(Game{ID: "g", Version: 4}, true)
	g, moved, _ = c.Get("g")
	require.EqualValues(t, 4, g.Version)
	require.True(t, moved)
	put(Game{ID: "g", Version: 5}, false)
	_, moved, _ = c.Get("g")
	require.False(t, moved)

	c.Drop("g")
	_, _, ok = c.Get("g")
	require.False(t, ok)

	for i := range 3 * store.VersionsSize {
		put(Game{ID: fmt.Sprint("game-", i), Version: 1}, false)
		require.LessOrEqual(t, c.Len(), store.VersionsSize)
	}
	_, _, ok = c.Get(fmt.Sprint("game-", 3*store.VersionsSize-1))
	require.True(t, ok, "the game just put is remembered")
}
