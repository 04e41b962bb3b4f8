package redisstore

import (
	"io/fs"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestScriptsTakeTimeAndChanceFromGo guards the rule that keeps the
// injectable clock in charge and miniredis runs deterministic: "now" and
// randomness are arguments, never read inside a script.
func TestScriptsTakeTimeAndChanceFromGo(t *testing.T) {
	t.Parallel()
	banned := regexp.MustCompile(`(?i)'TIME'|"TIME"|math\.random`)
	files, err := fs.Glob(luaFiles, "lua/*.lua")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		src, err := luaFiles.ReadFile(f)
		require.NoError(t, err)
		require.False(t, banned.Match(src), "%s reads the server's clock or randomness", f)
	}
}

func TestScriptErrorCodesAreDistinct(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range scriptErrorList {
		if seen[e.Code] {
			t.Fatalf("two errors share the code %q: scripts could not tell them apart", e.Code)
		}
		seen[e.Code] = true
	}
}
