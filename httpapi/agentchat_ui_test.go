package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
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
	req.OnEvent(agentchat.Event{Type: agentchat.EventAssistant, Content: "Fixed. Want me to deploy?\n\n| file | change |\n|---|---|\n| `styles.css` | **padding** |\n\n- one\n- two\n\n```\n<b>not bold</b>\n```\n[docs](https://example.com/docs) and [bad](javascript:window.__xss=3)"})
	cost := 0.0123
	req.OnEvent(agentchat.Event{Type: agentchat.EventDone, Result: "ok", Usage: []byte(`{"input_tokens":2400,"output_tokens":50}`), CostUSD: &cost})
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
	chat := httpapi.AgentChat(svc)
	mux := http.NewServeMux()
	for _, p := range []string{"/agent/", "/chat", "/chat/", "/chat.js"} {
		mux.Handle(p, chat)
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	// Made after the server, so the browser closes (and drops its event
	// stream) before the server waits for its connections.
	ctx := browser.New(t, 60*time.Second)

	var text, hint, title string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(srv.URL+"/chat"),
		chromedp.WaitVisible("textarea.input", chromedp.ByQuery),
		chromedp.Text(".log .hint", &hint, chromedp.ByQuery),
		chromedp.Text(".bar .title", &title, chromedp.ByQuery),
	))
	require.Equal(t, "Agent chat", title)
	require.Contains(t, hint, "Ask the coding agent", "an empty chat says what it is")
	require.NoError(t, chromedp.Run(ctx,
		browser.Type("textarea.input", "the footer overlaps the content on mobile", chromedp.ByQuery),
		chromedp.Click("button.send", chromedp.ByQuery),
		chromedp.WaitVisible(`details.tool`, chromedp.ByQuery),
		chromedp.Text(".log", &text, chromedp.ByQuery),
	))
	require.Contains(t, text, "the footer overlaps the content on mobile")
	require.Contains(t, text, `<img src=x onerror="window.__xss=1">`, "markup from the agent shows as text")
	require.Contains(t, text, "▸ Edit client/styles.css")
	require.NotContains(t, text, "Ask the coding agent", "the hint goes with the first message")

	// Reload mid-run: everything so far comes back from the store.
	var reloaded string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Reload(),
		chromedp.WaitVisible(`details.tool`, chromedp.ByQuery),
		chromedp.Text(".log", &reloaded, chromedp.ByQuery),
	))
	require.Equal(t, strings.Count(text, "I see the issue"), strings.Count(reloaded, "I see the issue"))
	require.Contains(t, reloaded, "▸ Edit client/styles.css")

	close(gate)
	var final, done string
	var xss any
	var cells, links, bold, items, agora int
	var badLink, status string
	var shot []byte
	require.NoError(t, chromedp.Run(ctx,
		chromedp.WaitVisible(`.msg.done`, chromedp.ByQuery),
		chromedp.Text(".log", &final, chromedp.ByQuery),
		chromedp.Text(".msg.done", &done, chromedp.ByQuery),
		chromedp.Evaluate(`window.__xss`, &xss),
		chromedp.Evaluate(`document.querySelectorAll(".md table td").length`, &cells),
		chromedp.Evaluate(`document.querySelectorAll(".md a").length`, &links),
		chromedp.Evaluate(`document.querySelectorAll(".md b").length`, &bold),
		chromedp.Evaluate(`document.querySelectorAll(".md li").length`, &items),
		chromedp.Evaluate(`[...document.querySelectorAll(".md a")].map(a => a.href).join(" ")`, &badLink),
		chromedp.Evaluate(`typeof window.Agora.chat === "function" ? 1 : 0`, &agora),
		chromedp.WaitNotPresent(`.status.running`, chromedp.ByQuery),
		chromedp.Text(".status", &status, chromedp.ByQuery),
		chromedp.Click(`details.tool summary`, chromedp.ByQuery),
		chromedp.CaptureScreenshot(&shot),
	))
	require.Nil(t, xss, "no agent output ran as script")
	require.Contains(t, final, "Fixed. Want me to deploy?")
	require.Equal(t, 1, strings.Count(final, "Fixed. Want me to deploy?"), "nothing shown twice after the reload")
	require.Equal(t, 2, cells, "the Markdown table is a table")
	require.Equal(t, 2, items, "the list is a list")
	require.Equal(t, 1, links, "only the http(s) link is a link")
	require.Equal(t, "https://example.com/docs", badLink)
	require.Zero(t, bold, "HTML in a code block stays text")
	require.Contains(t, final, "<b>not bold</b>")
	require.Contains(t, final, "[bad](javascript:window.__xss=3)")
	require.Equal(t, "done · 2400 in / 50 out tokens · $0.0123", done)
	require.Equal(t, "idle", status)
	require.Equal(t, 1, agora, "/chat.js exposes Agora.chat")
	var picker string
	require.Eventually(t, func() bool {
		_ = chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector("select.picker").selectedOptions[0].textContent`, &picker))
		return picker == "the footer overlaps the content on mobile"
	}, 5*time.Second, 20*time.Millisecond, "the switcher no longer marks it running: %q", picker)
	browser.SaveScreenshot(t, "chat.png", shot)
}
