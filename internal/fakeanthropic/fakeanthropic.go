// Package fakeanthropic serves just enough of Anthropic's Messages API for
// the real Claude Code CLI to run against it in tests, and finds that CLI.
//
//	api := fakeanthropic.Start(t, nil)
//	runner := &claudecli.Runner{Path: fakeanthropic.CLI(t), Env: api.Env(t.TempDir())}
package fakeanthropic

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// CLI finds the real Claude Code CLI: $AGORA_CLAUDE, or claude on PATH.
// Outside CI a machine without it skips the test; under CI=true it fails,
// so a green CI run always means the CLI really ran.
func CLI(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("AGORA_CLAUDE"); p != "" {
		return p
	}
	if p, err := exec.LookPath("claude"); err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("CI=true and no Claude Code CLI: npm install @anthropic-ai/claude-code (.ci/run does)")
	}
	t.Skip("no Claude Code CLI: npm install @anthropic-ai/claude-code, or set AGORA_CLAUDE")
	return ""
}

// Server is a fake Messages API. Unless its answer function says
// otherwise, it follows a script: a request offering tools gets a Bash
// tool call, the request carrying that call's result gets a closing text,
// anything else the text "ok". A request offering tools whose prompt says
// HANG_NOW gets no answer until the test ends. Token counting always
// answers 10 tokens.
type Server struct {
	// URL is where the API is served: the CLI's ANTHROPIC_BASE_URL.
	URL string

	answer    func(prompt string) string
	calls     func(tools []string, last json.RawMessage) *ToolUse
	mu        sync.Mutex
	requests  int
	withTools int
	hang      chan struct{}
}

// Start serves a fake Messages API until t ends. answer, when not nil, is
// asked first for every message request, with its prompt (the text of the
// last user message, see Prompt); text it returns is the whole reply, and
// "" leaves the request to the script.
func Start(t testing.TB, answer func(prompt string) string) *Server {
	t.Helper()
	s := &Server{answer: answer, hang: make(chan struct{})}
	srv := httptest.NewServer(s)
	s.URL = srv.URL
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(s.hang) }) // runs first: Close waits for hanging requests
	return s
}

// Env returns what the CLI's environment needs to talk to s and to
// nothing else: home as its HOME (so no user configuration is read), s as
// its API with a fake key, and no auto-updater, telemetry or other
// non-essential traffic.
func (s *Server) Env(home string) []string {
	return []string{"HOME=" + home, "ANTHROPIC_BASE_URL=" + s.URL, "ANTHROPIC_API_KEY=sk-test-fake",
		"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}
}

// ToolUse is a tool call of the fake model: the tool's name and its
// input, marshalled as JSON.
type ToolUse struct {
	Name  string // one of the tools the request offered
	Input any    // marshalled as the call's input
}

// Calls makes the fake model call tools by script: for every request that
// offers tools, next is asked with the names of the tools offered and the
// content of the request's last message (the result of the previous call,
// if any), and the call it returns is the model's answer; nil ends the turn
// with the text "Done.". Set it before the CLI runs.
func (s *Server) Calls(next func(tools []string, last json.RawMessage) *ToolUse) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = next
}

// ToolRequests returns how many message requests so far offered the
// model tools.
func (s *Server) ToolRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.withTools
}

// request is the part of a Messages API request the fake reads.
type request struct {
	Model string `json:"model"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

// Prompt returns the text of a message's content, a string or a list of
// blocks: its text blocks joined by newlines, leaving out the CLI's own
// <system-reminder> blocks.
func Prompt(content json.RawMessage) string {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(content, &blocks)
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" && !strings.HasPrefix(strings.TrimSpace(b.Text), "<system-reminder>") {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func sse(w io.Writer, event string, data any) {
	b, _ := json.Marshal(data)
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
}

// ServeHTTP answers one request of the CLI. Set AGORA_DEBUG_FAKE_API to
// see them on stderr.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.URL.Path, "/v1/messages") || strings.Contains(r.URL.Path, "count_tokens") {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"input_tokens":10}`)
		return
	}
	body, _ := io.ReadAll(r.Body)
	debug := os.Getenv("AGORA_DEBUG_FAKE_API") != ""
	if debug {
		fmt.Fprintf(os.Stderr, "fake API: %s %s %.300s\n", r.Method, r.URL, body)
	}
	var req request
	_ = json.Unmarshal(body, &req)
	s.mu.Lock()
	s.requests++
	n := s.requests
	if len(req.Tools) > 0 {
		s.withTools++
	}
	calls := s.calls
	s.mu.Unlock()
	if debug {
		fmt.Fprintf(os.Stderr, "fake API: tools=%d stream=%v\n", len(req.Tools), strings.Contains(string(body), `"stream":true`))
	}
	last, prompt := "", ""
	if len(req.Messages) > 0 {
		last = string(req.Messages[len(req.Messages)-1].Content)
	}
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			prompt = Prompt(req.Messages[i].Content)
			break
		}
	}
	answer := ""
	if s.answer != nil {
		answer = s.answer(prompt)
	}
	if answer == "" && strings.Contains(last, "HANG_NOW") && len(req.Tools) > 0 {
		select {
		case <-s.hang:
		case <-r.Context().Done():
		}
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	id := fmt.Sprintf("msg_fake_%d", n)
	sse(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": req.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]int{"input_tokens": 100, "output_tokens": 1}}})
	text := func(i int, s string) {
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": s}})
		sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	call := func(use ToolUse) {
		input, _ := json.Marshal(use.Input)
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 1, "content_block": map[string]any{
			"type": "tool_use", "id": fmt.Sprintf("toolu_fake_%d", n), "name": use.Name, "input": map[string]any{}}})
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 1, "delta": map[string]any{
			"type": "input_json_delta", "partial_json": string(input)}})
		sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": 1})
	}
	stop := "end_turn"
	var scripted *ToolUse
	if calls != nil && answer == "" && len(req.Tools) > 0 {
		names := make([]string, len(req.Tools))
		for i, t := range req.Tools {
			names[i] = t.Name
		}
		var lastRaw json.RawMessage
		if len(req.Messages) > 0 {
			lastRaw = req.Messages[len(req.Messages)-1].Content
		}
		if scripted = calls(names, lastRaw); scripted == nil {
			answer = "Done."
		}
	}
	switch {
	case answer != "":
		text(0, answer)
	case scripted != nil:
		text(0, "I'll call "+scripted.Name+".")
		call(*scripted)
		stop = "tool_use"
	case len(req.Tools) > 0 && strings.Contains(last, "tool_result"):
		text(0, "The command printed hello.")
	case len(req.Tools) > 0:
		text(0, "I'll run a command.")
		call(ToolUse{Name: "Bash", Input: map[string]string{"command": "echo hello", "description": "Print hello"}})
		stop = "tool_use"
	default:
		text(0, "ok")
	}
	sse(w, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 20}})
	sse(w, "message_stop", map[string]any{"type": "message_stop"})
}
