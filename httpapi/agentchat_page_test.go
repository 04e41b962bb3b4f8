package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/agentchat"
	"github.com/agorahq/agora/agentchat/claudecli"
	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/httpapi/chatauth"
	"github.com/agorahq/agora/internal/browser"
	"github.com/agorahq/agora/internal/fakeanthropic"
	"github.com/agorahq/agora/internal/testbackend"
	"github.com/agorahq/agora/store/storetest"
)

// chatPageEnv names a chat page written for slot-machine's agent API (its
// cmd/slot-machine/static/chat.html) to drive against Agora. The page is
// not Agora's: it is read from where the tester keeps it.
const chatPageEnv = "AGORA_SLOTMACHINE_CHAT_HTML"

// chatPage reads the page chatPageEnv names, or skips the test.
func chatPage(t *testing.T) []byte {
	t.Helper()
	path := os.Getenv(chatPageEnv)
	if path == "" {
		t.Skip(chatPageEnv + " is not set: point it at slot-machine's cmd/slot-machine/static/chat.html to drive that page against Agora")
	}
	page, err := os.ReadFile(path)
	require.NoError(t, err)
	return page
}

// pageIdle waits until the page takes input again with no status shown.
func pageIdle(timeout time.Duration) chromedp.Action {
	return chromedp.Poll(`!document.getElementById('sm-input').disabled && document.getElementById('sm-status').textContent === ''`, nil, chromedp.WithPollingTimeout(timeout))
}

// pageOpen loads the page at base and waits for its first-visit state.
func pageOpen(base string) chromedp.Tasks {
	return chromedp.Tasks{
		chromedp.Navigate(base + "/chat"),
		chromedp.WaitVisible(`.sm-empty`, chromedp.ByQuery),
	}
}

// pageSend types text into the page and presses its send button.
func pageSend(text string) chromedp.Tasks {
	return chromedp.Tasks{
		chromedp.SetValue(`#sm-input`, text, chromedp.ByID),
		chromedp.Click(`#sm-send`, chromedp.ByID),
	}
}

// pageRunner answers like a coding agent, a little at a time so that the
// page streams: a title marker split across chunks, text, a tool call and
// its result, closing text. A message containing "hang" waits after its
// tool call until it is cancelled.
type pageRunner struct{}

func (pageRunner) Run(ctx context.Context, req agentchat.RunRequest) (agentchat.RunResult, error) {
	pause := func() bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(40 * time.Millisecond):
			return true
		}
	}
	say := func(e agentchat.Event) bool {
		req.OnEvent(e)
		return pause()
	}
	title := "Footer layout"
	if strings.Contains(req.Message, "colour") {
		title = "Footer colours"
	}
	events := []agentchat.Event{
		{Type: agentchat.EventSystem, Content: "init", SessionID: "page-session"},
		{Type: agentchat.EventAssistant, Content: "[[TIT"},
		{Type: agentchat.EventAssistant, Content: "LE: " + title + "]]\nLooking at **" + req.Message + "** now."},
		{Type: agentchat.EventToolUse, Tool: "Read", ToolUseID: "toolu_1", Input: []byte(`{"file_path":"client/styles.css"}`)},
	}
	for _, e := range events {
		if !say(e) {
			return agentchat.RunResult{Stopped: "cancelled"}, nil
		}
	}
	if strings.Contains(req.Message, "hang") {
		<-ctx.Done()
		return agentchat.RunResult{Stopped: "cancelled"}, nil
	}
	for _, e := range []agentchat.Event{
		{Type: agentchat.EventToolResult, Tool: "Read", ToolUseID: "toolu_1", Output: "footer { position: fixed }"},
		{Type: agentchat.EventAssistant, Content: "Fixed: the body has bottom padding now."},
		{Type: agentchat.EventDone, Result: "Fixed."},
	} {
		if !say(e) {
			return agentchat.RunResult{Stopped: "cancelled"}, nil
		}
	}
	return agentchat.RunResult{SessionID: "page-session"}, nil
}

// pageErrors collects the page's uncaught exceptions.
type pageErrors struct {
	mu   sync.Mutex
	list []string
}

func (p *pageErrors) listen(ctx context.Context) {
	chromedp.ListenTarget(ctx, func(ev any) {
		if e, ok := ev.(*runtime.EventExceptionThrown); ok {
			p.mu.Lock()
			p.list = append(p.list, e.ExceptionDetails.Error())
			p.mu.Unlock()
		}
	})
}

func (p *pageErrors) get() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.list...)
}

// serveChatPage serves the page at /chat in front of Agora's agent API,
// which runs runner.
func serveChatPage(t *testing.T, page []byte, st storetest.Stores, runner agentchat.Runner, opts ...httpapi.ChatOption) *httptest.Server {
	t.Helper()
	svc := agentchat.New(st.AgentChat, runner, agentchat.WithNotifier(st.Notifier))
	t.Cleanup(svc.Close)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /chat", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(page)
	})
	h := httpapi.AgentChat(svc, opts...)
	for _, p := range []string{"/agent/", "/chat/", "/chat.css"} {
		mux.Handle(p, h)
	}
	srv := httptest.NewServer(validated(t, mux))
	t.Cleanup(srv.Close)
	return srv
}

// TestSlotMachineChatPage drives slot-machine's own chat page against
// Agora on every backend in headless Chromium: it lists conversations,
// sends and streams (title marker stripped, tool pill, final text), sends a
// second message whose reply appears, reopens the last conversation after
// a reload without repeating text, and cancels a run, after which the page
// takes input again.
func TestSlotMachineChatPage(t *testing.T) {
	page := chatPage(t)
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		srv := serveChatPage(t, page, st, pageRunner{})
		ctx := browser.New(t, 90*time.Second)
		var errs pageErrors
		errs.listen(ctx)
		shot := func(name string) chromedp.Action {
			return chromedp.ActionFunc(func(ctx context.Context) error {
				var b []byte
				if err := chromedp.CaptureScreenshot(&b).Do(ctx); err != nil {
					return err
				}
				browser.SaveScreenshot(t, strings.ReplaceAll(t.Name(), "/", "-")+"-"+name+".png", b)
				return nil
			})
		}
		idle := pageIdle(20 * time.Second)
		var empty, convItems int
		var title, transcript string
		require.NoError(t, chromedp.Run(ctx,
			pageOpen(srv.URL),
			chromedp.Evaluate(`document.querySelectorAll('.sm-empty').length`, &empty),
			pageSend("the footer overlaps the content on mobile"),
			chromedp.WaitVisible(`.sm-tool`, chromedp.ByQuery),
			idle,
			chromedp.Poll(`document.getElementById('sm-title').textContent === 'Footer layout'`, nil, chromedp.WithPollingTimeout(10*time.Second)),
			shot("first-reply"),
			pageSend("and the colour"),
			chromedp.Poll(`document.querySelectorAll('.sm-tool').length === 2`, nil, chromedp.WithPollingTimeout(20*time.Second)),
			idle,
			chromedp.Poll(`document.getElementById('sm-messages').textContent.includes('Looking at and the colour now.')`, nil, chromedp.WithPollingTimeout(10*time.Second)),
			chromedp.Text(`#sm-messages`, &transcript, chromedp.ByID),
			shot("second-reply"),
		))
		require.Equal(t, 1, empty, "a first visit shows the empty state")
		require.NotContains(t, transcript, "TITLE", "the marker never reaches the page")
		require.Equal(t, 2, strings.Count(transcript, "Fixed: the body has bottom padding now."), "both replies, once each")
		require.Equal(t, 1, strings.Count(transcript, "Looking at the footer overlaps the content on mobile now."), "streamed once")

		// A reload reopens the conversation, rendered once from the store.
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Reload(),
			chromedp.Poll(`document.querySelectorAll('#sm-messages .sm-tool').length === 2`, nil, chromedp.WithPollingTimeout(20*time.Second)),
			chromedp.Text(`#sm-messages`, &transcript, chromedp.ByID),
			chromedp.Text(`#sm-title`, &title, chromedp.ByID),
			shot("reloaded"),
			chromedp.Click(`#sm-conv-btn`, chromedp.ByID),
			chromedp.WaitVisible(`.sm-conv-item`, chromedp.ByQuery),
			chromedp.Evaluate(`document.querySelectorAll('.sm-conv-item').length`, &convItems),
			shot("conversations"),
			chromedp.Click(`#sm-conv-overlay .sm-panel-close`, chromedp.ByQuery),
		))
		require.Equal(t, "Footer colours", title, "the agent's latest title")
		require.Equal(t, 1, convItems)
		require.Equal(t, 2, strings.Count(transcript, "Fixed: the body has bottom padding now."))
		require.Equal(t, 1, strings.Count(transcript, "Looking at the footer overlaps the content on mobile now."), "nothing shown twice")

		// Cancel: the page stops working and takes input again.
		var status string
		var disabled bool
		require.NoError(t, chromedp.Run(ctx,
			pageSend("hang on the header"),
			chromedp.Poll(`document.querySelectorAll('.sm-tool').length === 3`, nil, chromedp.WithPollingTimeout(20*time.Second)),
			chromedp.Text(`#sm-status`, &status, chromedp.ByID),
			shot("working"),
			chromedp.Click(`#sm-send`, chromedp.ByID), // the send button cancels while the agent works
			chromedp.Poll(`!document.getElementById('sm-input').disabled`, nil, chromedp.WithPollingTimeout(20*time.Second)),
			shot("cancelled"),
		))
		require.Equal(t, "Agent is working…", status)
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Text(`#sm-status`, &status, chromedp.ByID),
			chromedp.Evaluate(`document.getElementById('sm-input').disabled`, &disabled),
		))
		require.Equal(t, "Agent encountered an error.", status, "a cancelled run ends as slot-machine's does")
		require.False(t, disabled)
		require.Empty(t, errs.get(), "the page threw")
	})
}

// TestSlotMachineChatPageDelegated drives the page through the delegated
// auth scheme: the browser's cookie reaches the application's auth
// endpoint on every API call and stream, so the page works signed in and
// not at all signed out.
func TestSlotMachineChatPageDelegated(t *testing.T) {
	page := chatPage(t)
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("session"); err == nil && c.Value == "signed-in" {
			w.WriteHeader(204)
			return
		}
		w.WriteHeader(401)
	}))
	t.Cleanup(app.Close)
	auth, err := chatauth.Delegate(app.URL+"/auth", nil)
	require.NoError(t, err)
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		srv := serveChatPage(t, page, st, pageRunner{}, httpapi.WithChatAuth(auth))
		ctx := browser.New(t, 60*time.Second)
		var png []byte
		var toolCount int
		require.NoError(t, chromedp.Run(ctx,
			chromedp.ActionFunc(func(ctx context.Context) error {
				return network.SetCookie("session", "signed-in").WithURL(srv.URL).Do(ctx)
			}),
			pageOpen(srv.URL),
			pageSend("the footer"),
			chromedp.Poll(`!document.getElementById('sm-input').disabled && document.getElementById('sm-messages').textContent.includes('Fixed: the body')`, nil, chromedp.WithPollingTimeout(20*time.Second)),
			chromedp.Evaluate(`document.querySelectorAll('.sm-tool').length`, &toolCount),
			chromedp.CaptureScreenshot(&png),
		))
		require.Equal(t, 1, toolCount)
		browser.SaveScreenshot(t, strings.ReplaceAll(t.Name(), "/", "-")+".png", png)
	})
}

// TestSlotMachineChatPageRealCLI drives slot-machine's page against Agora
// on every backend with the real Claude Code CLI as the agent, talking to a
// fake Messages API: the agent runs a command (a tool pill), answers with a
// title marker the page never shows, and a run hanging on the API is
// cancelled from the page.
func TestSlotMachineChatPageRealCLI(t *testing.T) {
	page := chatPage(t)
	bin := fakeanthropic.CLI(t)
	api := fakeanthropic.Start(t, func(prompt string) string {
		if prompt == "" { // the request carrying the command's result
			return "[[TITLE: Echo check]]\nThe command printed hello."
		}
		return ""
	})
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		runner := &claudecli.Runner{
			Path: bin, Dir: t.TempDir(), AllowedTools: []string{"Bash"}, SystemPrompt: agentchat.TitleInstructions,
			Env:         api.Env(t.TempDir()),
			IdleTimeout: 30 * time.Second, TotalTimeout: 90 * time.Second, KillGrace: 2 * time.Second, AfterResult: 2 * time.Second,
		}
		srv := serveChatPage(t, page, st, runner)

		ctx := browser.New(t, 3*time.Minute)
		var errs pageErrors
		errs.listen(ctx)
		var transcript, title, status string
		var png []byte
		require.NoError(t, chromedp.Run(ctx,
			pageOpen(srv.URL),
			pageSend("run echo hello"),
			chromedp.WaitVisible(`.sm-tool`, chromedp.ByQuery),
			chromedp.Poll(`!document.getElementById('sm-input').disabled && document.getElementById('sm-title').textContent === 'Echo check'`, nil, chromedp.WithPollingTimeout(90*time.Second)),
			chromedp.Text(`#sm-messages`, &transcript, chromedp.ByID),
			chromedp.Text(`#sm-title`, &title, chromedp.ByID),
			chromedp.Text(`#sm-status`, &status, chromedp.ByID),
			chromedp.CaptureScreenshot(&png),
		))
		browser.SaveScreenshot(t, strings.ReplaceAll(t.Name(), "/", "-")+"-reply.png", png)
		require.Contains(t, transcript, "The command printed hello.")
		require.NotContains(t, transcript, "TITLE")
		require.Empty(t, status)

		asked := api.ToolRequests()
		require.NoError(t, chromedp.Run(ctx,
			pageSend("HANG_NOW please"),
			chromedp.Poll(`document.getElementById('sm-status').textContent === 'Agent is working…'`, nil, chromedp.WithPollingTimeout(30*time.Second)),
		))
		require.Eventually(t, func() bool { return api.ToolRequests() > asked }, 60*time.Second, 50*time.Millisecond, "the CLI reaches the hanging API call")
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Click(`#sm-send`, chromedp.ByID),
			chromedp.Poll(`!document.getElementById('sm-input').disabled`, nil, chromedp.WithPollingTimeout(60*time.Second)),
			chromedp.Text(`#sm-status`, &status, chromedp.ByID),
			chromedp.CaptureScreenshot(&png),
		))
		browser.SaveScreenshot(t, strings.ReplaceAll(t.Name(), "/", "-")+"-cancelled.png", png)
		require.Equal(t, "Agent encountered an error.", status)
		require.Empty(t, errs.get(), "the page threw")
	})
}

// cutWriter ends a stream's request once it has written n events.
type cutWriter struct {
	http.ResponseWriter
	n      int
	cancel context.CancelFunc
}

func (w *cutWriter) Write(b []byte) (int, error) {
	n, err := w.ResponseWriter.Write(b)
	if w.n -= strings.Count("\n"+string(b), "\nevent: "); w.n <= 0 {
		w.cancel()
	}
	return n, err
}

func (w *cutWriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

// TestSlotMachineChatPageReconnects cuts the stream of the page's second
// message after a few events, on every backend: the page's EventSource
// reconnects to its first URL, ?after included, with Last-Event-ID, and the
// reply is shown once.
func TestSlotMachineChatPageReconnects(t *testing.T) {
	page := chatPage(t)
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		chat := serveChatPage(t, page, st, pageRunner{})
		var mu sync.Mutex
		var reconnects []string // the ?after and Last-Event-ID of streams reopened by the browser
		cut := false
		front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			proxy := func(w http.ResponseWriter, r *http.Request) {
				req, _ := http.NewRequestWithContext(r.Context(), r.Method, chat.URL+r.URL.RequestURI(), r.Body)
				req.Header = r.Header.Clone()
				res, err := http.DefaultTransport.RoundTrip(req)
				if err != nil {
					return
				}
				defer res.Body.Close()
				for k, v := range res.Header {
					w.Header()[k] = v
				}
				w.WriteHeader(res.StatusCode)
				buf := make([]byte, 4096)
				for {
					n, err := res.Body.Read(buf)
					if n > 0 {
						_, _ = w.Write(buf[:n])
						if f, ok := w.(http.Flusher); ok {
							f.Flush()
						}
					}
					if err != nil || r.Context().Err() != nil {
						return
					}
				}
			}
			if strings.HasSuffix(r.URL.Path, "/stream") && r.URL.Query().Get("after") != "" {
				mu.Lock()
				first := !cut
				cut = true
				if r.Header.Get("Last-Event-ID") != "" {
					reconnects = append(reconnects, r.URL.Query().Get("after")+" "+r.Header.Get("Last-Event-ID"))
				}
				mu.Unlock()
				if first {
					ctx, cancel := context.WithCancel(r.Context())
					defer cancel()
					proxy(&cutWriter{ResponseWriter: w, n: 3, cancel: cancel}, r.WithContext(ctx))
					return
				}
			}
			proxy(w, r)
		}))
		t.Cleanup(front.Close)

		ctx := browser.New(t, 90*time.Second)
		var errs pageErrors
		errs.listen(ctx)
		idle := pageIdle(30 * time.Second)
		var transcript string
		var png []byte
		require.NoError(t, chromedp.Run(ctx,
			pageOpen(front.URL),
			pageSend("the footer"),
			chromedp.WaitVisible(`.sm-tool`, chromedp.ByQuery),
			idle,
			pageSend("and the colour"),
			chromedp.Poll(`document.querySelectorAll('.sm-tool').length === 2`, nil, chromedp.WithPollingTimeout(30*time.Second)),
			idle,
			chromedp.Text(`#sm-messages`, &transcript, chromedp.ByID),
			chromedp.CaptureScreenshot(&png),
		))
		browser.SaveScreenshot(t, strings.ReplaceAll(t.Name(), "/", "-")+".png", png)
		mu.Lock()
		defer mu.Unlock()
		require.NotEmpty(t, reconnects, "the browser reconnected the cut stream")
		require.Equal(t, 1, strings.Count(transcript, "Looking at and the colour now."), "the reconnect replayed nothing twice")
		require.Equal(t, 2, strings.Count(transcript, "Fixed: the body has bottom padding now."))
		require.Empty(t, errs.get(), "the page threw")
	})
}
