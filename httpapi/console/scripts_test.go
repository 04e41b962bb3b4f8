package console_test

import (
	"io"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/httpapi/console"
)

// TestPagesShareConsoleJS: every page loads console.js, served by the
// handler, before its own script, and no page script writes again what
// console.js holds — its own DOM helper, fetch or sessionStorage.
func TestPagesShareConsoleJS(t *testing.T) {
	h := console.Handler()
	get := func(path string) string {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		require.Equal(t, 200, rec.Code, path)
		b, err := io.ReadAll(rec.Body)
		require.NoError(t, err)
		return string(b)
	}
	shared := get("/console/console.js")
	require.Contains(t, shared, "window.agora =")
	scriptTag := regexp.MustCompile(`<script src="([^"]+)"></script>`)
	for page, own := range map[string]string{"/jobs": "jobs.js", "/squad": "squad.js", "/arena/g1": "arena.js", "/device": "device.js"} {
		var srcs []string
		for _, m := range scriptTag.FindAllStringSubmatch(get(page), -1) {
			srcs = append(srcs, m[1])
		}
		require.Equal(t, []string{"/console/console.js", "/console/" + own}, srcs, page)
		js := get("/console/" + own)
		for _, again := range []string{"function el(", "fetch(", "sessionStorage.", "document.createElement(", "getElementById("} {
			require.False(t, strings.Contains(js, again), "%s writes %q again: console.js has it", own, again)
		}
	}
}
