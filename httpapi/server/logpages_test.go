package server

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStartupLogNamesThePages: the start-up log names the front door, each
// console and the health route with their URLs.
func TestStartupLogNamesThePages(t *testing.T) {
	var buf bytes.Buffer
	frontDoor{chat: true}.logPages(slog.New(slog.NewTextHandler(&buf, nil)), "http://127.0.0.1:8080")
	log := buf.String()
	for _, url := range []string{"/", "/jobs", "/squad", "/arena/{game_id}", "/chat", "/healthz", "/openapi.json"} {
		url = "url=http://127.0.0.1:8080" + url
		require.True(t, strings.Contains(log, url+" ") || strings.Contains(log, url+"\n"), "%s in\n%s", url, log)
	}
}
