package arena

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestGameCacheKeepsTheNewestAndStaysBounded(t *testing.T) {
	var c gameCache
	_, ok := c.get("g")
	require.False(t, ok)
	c.put(Game{ID: "g", Version: 3, Status: StatusPhase1})
	c.put(Game{ID: "g", Version: 2, Status: StatusWaiting})
	c.put(Game{ID: "g", Version: 3, Status: StatusPhase2})
	g, ok := c.get("g")
	require.True(t, ok)
	require.Equal(t, Game{ID: "g", Version: 3, Status: StatusPhase1}, g, "an older or equal version never replaces the remembered one")
	c.put(Game{ID: "g", Version: 4})
	g, _ = c.get("g")
	require.EqualValues(t, 4, g.Version)
	c.drop("g")
	_, ok = c.get("g")
	require.False(t, ok)

	for i := range 3 * gameCacheSize {
		c.put(Game{ID: fmt.Sprint("game-", i), Version: 1})
		require.LessOrEqual(t, len(c.games), gameCacheSize)
	}
	_, ok = c.get(fmt.Sprint("game-", 3*gameCacheSize-1))
	require.True(t, ok, "the game just put is remembered")
}
