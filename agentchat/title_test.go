package agentchat

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// feedAll runs chunks through one filter and returns the text it let
// through (Flush included) and the last title it found.
func feedAll(chunks []string) (string, string) {
	var f titleFilter
	var out strings.Builder
	title := ""
	for _, c := range chunks {
		text, t := f.Feed(c)
		out.WriteString(text)
		if t != "" {
			title = t
		}
	}
	out.WriteString(f.Flush())
	return out.String(), title
}

func TestTitleFilterWholeChunk(t *testing.T) {
	text, title := feedAll([]string{"[[TITLE: fix the login bug]]\nworking on: fix the login bug (1/10)"})
	require.Equal(t, "working on: fix the login bug (1/10)", text)
	require.Equal(t, "fix the login bug", title)

	text, title = feedAll([]string{"Done.\n[[TITLE:  Footer layout ]]"})
	require.Equal(t, "Done.\n", text)
	require.Equal(t, "Footer layout", title)

	text, title = feedAll([]string{"[[TITLE: first]]\nA\n[[TITLE: second]]\nB"})
	require.Equal(t, "A\nB", text)
	require.Equal(t, "second", title, "the last marker wins, as the agent may update its title")

	text, title = feedAll([]string{"[[TITLE: only]]"})
	require.Empty(t, text)
	require.Equal(t, "only", title)
}

// TestTitleFilterSplitAnywhere splits a marker-bearing text at every byte
// and in every pair of places: the marker never gets through and the text
// around it is whole.
func TestTitleFilterSplitAnywhere(t *testing.T) {
	const in = "Sure — [[TITLE: fix the login bug]]\nlooking at it now"
	for i := 0; i <= len(in); i++ {
		for j := i; j <= len(in); j++ {
			text, title := feedAll([]string{in[:i], in[i:j], in[j:]})
			require.Equal(t, "fix the login bug", title, "split at %d, %d", i, j)
			require.NotContains(t, text, "[[", "split at %d, %d", i, j)
			require.NotContains(t, text, "TITLE", "split at %d, %d", i, j)
			require.Contains(t, text, "looking at it now", "split at %d, %d", i, j)
			require.Equal(t, "Sure — looking at it now", text, "split at %d, %d", i, j)
		}
	}
}

// TestTitleFilterNotAMarker lets text that only looks like a marker's start
// through, in order.
func TestTitleFilterNotAMarker(t *testing.T) {
	for _, chunks := range [][]string{
		{"a [", "b] c"},
		{"x [[TIT", "LE is not closed\nnext line"},
		{"[[TITLE: no end"},
		{"arrays [[1, 2]] and [[TITLE:\n", "x]]"},
		{"ends with [["},
		{"ends with [[TITLE:"},
		{"[[TITLE: " + strings.Repeat("x", maxHeldBack), " more"},
	} {
		text, title := feedAll(chunks)
		require.Empty(t, title, "%q", chunks)
		require.Equal(t, strings.Join(chunks, ""), text, "%q", chunks)
	}
}

func TestTitleIsBounded(t *testing.T) {
	_, title := feedAll([]string{"[[TITLE: " + strings.Repeat("é", MaxTitleLen+50) + "]]\nok"})
	require.Equal(t, MaxTitleLen, len([]rune(title)))
}
