package agentchat_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/agentchat"
	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/internal/browser"
	"github.com/agorahq/agora/store/memstore"
)

// hostileRunner answers with output that would run script if the page
// ever treated agent text as HTML, makes a tool call, then waits on gate.
type hostileRunner struct{ gate chan struct{} }

func (h hostileRunner) Run(ctx context.Context, req agentchat.RunRequest) (agentchat.RunResult, error) {
	req.OnEvent(agentchat.Event{Type: agentchat.EventSystem, Content: "init", SessionID: "s"})
	req.OnEvent(agentchat.Event{Type: agentchat.EventAssistant, Content: `I see the issue <img src=x onerror="window.__xss=1"><script>window.__xss=2</script>`})
	req.OnEvent(agentchat.Event{Type: agentchat.EventToolUse, Tool: "Edit", ToolUseID: "t1", Input: []byte(`{"file_path":"client/styles.css"}`)})
	select {
	case <-h.gate:
	case <-ctx.Done():
		return agentchat.RunResult{}, nil
	}
	req.OnEvent(agentchat.Event{Type: agentchat.EventToolResult, Tool: "Edit", ToolUseID: "t1", Output: "File edited successfully"})
	req.OnEvent(agentchat.Event{Type: agentchat.EventAssistant, Content: "Fixed. Want me to deploy?"})
	req.OnEvent(agentchat.Event{Type: agentchat.EventDone, Result: "ok"})
	return agentchat.RunResult{SessionID: "s"}, nil
}

// TestChatUIInChromium types a message into /chat, sees the streamed reply
// and the tool pill, reloads mid-run without losing anything, and checks
// that agent output is never run as markup.
func TestChatUIInChromium(t *testing.T) {
	st := memstore.New()
	gate := make(chan struct{})
	svc := agentchat.New(st, hostileRunner{gate}, agentchat.WithNotifier(st))
	t.Cleanup(svc.Close)
	mux := http.NewServeMux()
	mux.Handle("/agent/", httpapi.AgentChat(svc))
	mux.Handle("/chat", agentchat.UI())
	mux.Handle("/chat/", agentchat.UI())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	// Made after the server, so the browser closes (and drops its event
	// stream) before the server waits for its connections.
	ctx := browser.New(t, 60*time.Second)

	var text string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(srv.URL+"/chat"),
		chromedp.WaitVisible("#input", chromedp.ByID),
		chromedp.SendKeys("#input", "the footer overlaps the content on mobile", chromedp.ByID),
		chromedp.Click("#send", chromedp.ByID),
		chromedp.WaitVisible(`details.tool`, chromedp.ByQuery),
		chromedp.Text("#log", &text, chromedp.ByID),
	))
	require.Contains(t, text, "the footer overlaps the content on mobile")
	require.Contains(t, text, `<img src=x onerror="window.__xss=1">`, "markup from the agent shows as text")
	require.Contains(t, text, "▸ Edit client/styles.css")

	// Reload mid-run: everything so far comes back from the store.
	var reloaded string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Reload(),
		chromedp.WaitVisible(`details.tool`, chromedp.ByQuery),
		chromedp.Text("#log", &reloaded, chromedp.ByID),
	))
	require.Equal(t, strings.Count(text, "I see the issue"), strings.Count(reloaded, "I see the issue"))
	require.Contains(t, reloaded, "▸ Edit client/styles.css")

	close(gate)
	var final string
	var xss any
	var shot []byte
	require.NoError(t, chromedp.Run(ctx,
		chromedp.WaitVisible(`.msg.done`, chromedp.ByQuery),
		chromedp.Text("#log", &final, chromedp.ByID),
		chromedp.Evaluate(`window.__xss`, &xss),
		chromedp.Click(`details.tool summary`, chromedp.ByQuery),
		chromedp.CaptureScreenshot(&shot),
	))
	require.Nil(t, xss, "no agent output ran as script")
	require.Contains(t, final, "Fixed. Want me to deploy?")
	require.Equal(t, 1, strings.Count(final, "Fixed. Want me to deploy?"), "nothing shown twice after the reload")
	if dir := os.Getenv("AGORA_SCREENSHOTS"); dir != "" {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "chat.png"), shot, 0o644))
	}
}
