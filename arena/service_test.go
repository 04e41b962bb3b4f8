package arena

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestGameCacheKeepsTheNewestAndStaysBounded(t *testing.T) {
	var c gameCache
	_, _, ok := c.get("g")
	require.False(t, ok)
	c.put(Game{ID: "g", Version: 3, Status: StatusPhase1}, false)
	c.put(Game{ID: "g", Version: 2, Status: StatusWaiting}, false)
	c.put(Game{ID: "g", Version: 3, Status: StatusPhase2}, false)
	g, moved, ok := c.get("g")
	require.True(t, ok)
	require.False(t, moved)
	require.Equal(t, Game{ID: "g", Version: 3, Status: StatusPhase1}, g, "an older or equal version never replaces the remembered one")

	// The stale mark: set by any action that found it, cleared by one
	// that saw the remembered version or a newer one and found nothing.
	c.put(Game{ID: "g", Version: 2}, true)
	_, moved, _ = c.get("g")
	require.True(t, moved)
	c.put(Game{ID: "g", Version: 2}, false)
	_, moved, _ = c.get("g")
	require.True(t, moved, "an older game never clears the mark")
	c.put(Game{ID: "g", Version: 3}, false)
	_, moved, _ = c.get("g")
	require.False(t, moved)
	c.put(Game{ID: "g", Version: 4}, true)
	g, moved, _ = c.get("g")
	require.EqualValues(t, 4, g.Version)
	require.True(t, moved)
	c.put(Game{ID: "g", Version: 5}, false)
	_, moved, _ = c.get("g")
	require.False(t, moved)

	c.drop("g")
	_, _, ok = c.get("g")
	require.False(t, ok)

	for i := range 3 * gameCacheSize {
		c.put(Game{ID: fmt.Sprint("game-", i), Version: 1}, false)
		require.LessOrEqual(t, len(c.games), gameCacheSize)
	}
	_, _, ok = c.get(fmt.Sprint("game-", 3*gameCacheSize-1))
	require.True(t, ok, "the game just put is remembered")
}
