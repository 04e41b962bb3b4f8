package redisstore

import (
	"io/fs"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDiscussionAndArenaKeysBuiltInGo guards the rule that the key layout
// of the discussion and arena aggregates is written once, in Go: their
// scripts take keys in KEYS, or a kind's prefix (keyPrefix,
// gamesByStatusKey("")) in ARGV, and never spell a key's kind themselves.
func TestDiscussionAndArenaKeysBuiltInGo(t *testing.T) {
	t.Parallel()
	kind := regexp.MustCompile(`['"][A-Za-z_|]*:['"]`)
	for _, glob := range []string{"lua/discussion_*.lua", "lua/arena_*.lua"} {
		files, err := fs.Glob(luaFiles, glob)
		require.NoError(t, err)
		require.NotEmpty(t, files, glob)
		for _, f := range files {
			src, err := luaFiles.ReadFile(f)
			require.NoError(t, err)
			require.Empty(t, kind.FindAll(src, -1), "%s spells a key of its own; take it, or its kind's prefix, from Go", f)
		}
	}
}
