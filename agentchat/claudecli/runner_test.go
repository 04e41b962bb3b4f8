package claudecli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"

	"github.com/agorahq/agora/agentchat"
)

var fakeClaude string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "claudecli-test-")
	if err != nil {
		panic(err)
	}
	fakeClaude = filepath.Join(dir, "claude")
	out, err := exec.Command("go", "build", "-o", fakeClaude, "./testdata/fakeclaude").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building the fake claude: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type fake struct {
	t      *testing.T
	runner *Runner
	record string
	dir    string
}

// newFake returns a runner of the fake CLI in mode, with short timeouts.
func newFake(t *testing.T, mode, fixture string) *fake {
	t.Helper()
	dir := t.TempDir()
	fixtures, err := filepath.Abs(filepath.Join("testdata", "stream-json"))
	require.NoError(t, err)
	record := filepath.Join(t.TempDir(), "record")
	return &fake{t: t, dir: dir, record: record, runner: &Runner{
		Path: fakeClaude, Dir: dir,
		Env:          []string{"FAKE_MODE=" + mode, "FAKE_FIXTURE=" + fixture, "FAKE_FIXTURES=" + fixtures, "FAKE_RECORD=" + record, "FROM_ENV_FILE=yes"},
		SystemPrompt: "You run inside Agora.",
		IdleTimeout:  2 * time.Second, TotalTimeout: 10 * time.Second, KillGrace: 300 * time.Millisecond, AfterResult: 300 * time.Millisecond,
	}}
}

type invocation struct {
	Args        []string `json:"args"`
	Stdin       string   `json:"stdin"`
	Cwd         string   `json:"cwd"`
	AgoraAgent  string   `json:"agora_agent"`
	FromEnvFile string   `json:"from_env_file"`
	Home        string   `json:"home"`
	TraceParent string   `json:"traceparent"`
}

func (f *fake) invocations() []invocation {
	f.t.Helper()
	file, err := os.Open(f.record)
	require.NoError(f.t, err)
	defer file.Close()
	var out []invocation
	sc := bufio.NewScanner(file)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var inv invocation
		require.NoError(f.t, json.Unmarshal(sc.Bytes(), &inv))
		out = append(out, inv)
	}
	return out
}

func (f *fake) run(ctx context.Context, req agentchat.RunRequest) (agentchat.RunResult, []agentchat.Event) {
	f.t.Helper()
	var mu sync.Mutex
	var events []agentchat.Event
	req.OnEvent = func(e agentchat.Event) { mu.Lock(); events = append(events, e); mu.Unlock() }
	res, err := f.runner.Run(ctx, req)
	require.NoError(f.t, err)
	return res, events
}

func types(evs []agentchat.Event) []agentchat.EventType {
	var out []agentchat.EventType
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

func TestRunnerStartsTheCLIAsSpecified(t *testing.T) {
	t.Parallel()
	f := newFake(t, "replay", "success_tool_use.jsonl")
	f.runner.AllowedTools = []string{"Bash", "Read"}
	f.runner.Tools = []string{"Bash", "Read", "Grep"}
	msg := "--help me; rm -rf / \"quoted\""
	res, evs := f.run(context.Background(), agentchat.RunRequest{Message: msg, SessionID: "-odd-session"})
	require.Equal(t, []agentchat.EventType{agentchat.EventSystem, agentchat.EventAssistant, agentchat.EventToolUse, agentchat.EventToolResult, agentchat.EventAssistant, agentchat.EventDone}, types(evs))
	require.Equal(t, "326bff2f-1227-4fb1-9e44-cb5d0ef09ad6", res.SessionID)
	require.Zero(t, res.ExitCode)
	require.Empty(t, res.Stopped)
	inv := f.invocations()
	require.Len(t, inv, 1)
	require.Equal(t, msg, inv[0].Stdin, "the message goes on stdin")
	for _, a := range inv[0].Args {
		require.NotContains(t, a, "rm -rf", "never as an argument")
	}
	require.Equal(t, []string{"-p", "--output-format", "stream-json", "--verbose", "--resume=-odd-session",
		"--append-system-prompt", "You run inside Agora.", "--allowedTools", "Bash,Read", "--tools", "Bash,Read,Grep"}, inv[0].Args)
	realDir, _ := filepath.EvalSymlinks(f.dir)
	require.Equal(t, realDir, inv[0].Cwd)
	require.Equal(t, "1", inv[0].AgoraAgent)
	require.Equal(t, "yes", inv[0].FromEnvFile)
	require.Equal(t, os.Getenv("HOME"), inv[0].Home, "the server's own environment passes through")
}

func TestRunnerPromptFile(t *testing.T) {
	t.Parallel()
	f := newFake(t, "replay", "success_tool_use.jsonl")
	file := filepath.Join(t.TempDir(), "agent_prompt.md")
	require.NoError(t, os.WriteFile(file, []byte("Only touch client/."), 0o600))
	f.runner.PromptFile = file
	f.run(context.Background(), agentchat.RunRequest{Message: "hi"})
	args := f.invocations()[0].Args
	require.Equal(t, "You run inside Agora.\n\nOnly touch client/.", args[len(args)-1])
	require.NotContains(t, args, "--resume")
}

func TestRunnerFallsBackWhenResumeFails(t *testing.T) {
	t.Parallel()
	f := newFake(t, "bad-resume", "")
	res, evs := f.run(context.Background(), agentchat.RunRequest{Message: "and now?", SessionID: "gone", History: []agentchat.Turn{{Role: "user", Content: "fix the footer"}, {Role: "assistant", Content: "Done."}}})
	require.True(t, res.FellBack)
	require.Equal(t, agentchat.EventSystem, evs[0].Type)
	require.Contains(t, evs[0].Content, "could not resume")
	require.Equal(t, []agentchat.EventType{agentchat.EventSystem, agentchat.EventSystem, agentchat.EventAssistant, agentchat.EventToolUse, agentchat.EventToolResult, agentchat.EventAssistant, agentchat.EventDone}, types(evs))
	inv := f.invocations()
	require.Len(t, inv, 2, "exactly one retry")
	require.Contains(t, inv[0].Args, "--resume=gone")
	for _, a := range inv[1].Args {
		require.False(t, strings.HasPrefix(a, "--resume"))
	}
	require.Contains(t, inv[1].Stdin, "fix the footer")
	require.True(t, strings.HasSuffix(inv[1].Stdin, "and now?"))
}

func TestRunnerIdleWatchdog(t *testing.T) {
	t.Parallel()
	f := newFake(t, "hang", "")
	f.runner.IdleTimeout = 300 * time.Millisecond
	res, evs := f.run(context.Background(), agentchat.RunRequest{Message: "hi"})
	require.Contains(t, res.Stopped, "no output")
	require.Equal(t, agentchat.EventError, evs[len(evs)-1].Type)
	require.Contains(t, evs[len(evs)-1].Content, "stopped")
}

func TestRunnerTotalTimeoutDespiteRetries(t *testing.T) {
	t.Parallel()
	f := newFake(t, "chatty", "")
	f.runner.IdleTimeout = 200 * time.Millisecond // api_retry lines keep it from idling
	f.runner.TotalTimeout = 700 * time.Millisecond
	res, _ := f.run(context.Background(), agentchat.RunRequest{Message: "hi"})
	require.Contains(t, res.Stopped, "still running after")
}

func TestRunnerKillsLingeringProcess(t *testing.T) {
	t.Parallel()
	f := newFake(t, "linger", "")
	res, evs := f.run(context.Background(), agentchat.RunRequest{Message: "hi"})
	require.Contains(t, res.Stopped, "after its result")
	require.Equal(t, agentchat.EventDone, evs[len(evs)-1].Type, "a run that produced its result is not an error")
}

func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	// A zombie still answers signal 0: look at its state.
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err == nil && !strings.Contains(string(b), ") Z ")
}

func TestRunnerCancelStopsTheWholeGroup(t *testing.T) {
	t.Parallel()
	f := newFake(t, "grandchild", "")
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for {
			if _, err := os.Stat(f.record + ".child"); err == nil {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	res, _ := f.run(ctx, agentchat.RunRequest{Message: "hi"})
	require.Equal(t, "cancelled", res.Stopped)
	b, err := os.ReadFile(f.record + ".child")
	require.NoError(t, err)
	pid, _ := strconv.Atoi(string(b))
	require.Eventually(t, func() bool { return !alive(pid) }, 5*time.Second, 20*time.Millisecond, "the grandchild is gone")
}

func TestRunnerSIGKILLsWhatIgnoresSIGTERM(t *testing.T) {
	t.Parallel()
	f := newFake(t, "ignore-term", "")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, _ := f.run(ctx, agentchat.RunRequest{Message: "hi"})
	require.Equal(t, "cancelled", res.Stopped)
	require.Less(t, time.Since(start), 5*time.Second)
}

func TestRunnerCrashKeepsStderrTail(t *testing.T) {
	t.Parallel()
	f := newFake(t, "crash", "")
	res, evs := f.run(context.Background(), agentchat.RunRequest{Message: "hi"})
	require.Equal(t, 3, res.ExitCode)
	require.LessOrEqual(t, len(res.Stderr), StderrTail)
	require.Contains(t, res.Stderr, "fatal: the end")
	last := evs[len(evs)-1]
	require.Equal(t, agentchat.EventError, last.Type)
	require.Contains(t, last.Content, "exited with code 3")
}

func TestRunnerMissingCLI(t *testing.T) {
	t.Parallel()
	_, err := (&Runner{Path: filepath.Join(t.TempDir(), "no-claude")}).Run(context.Background(), agentchat.RunRequest{Message: "hi"})
	require.Error(t, err)
}

// TestRunnerPassesTheTrace: a run whose context carries a trace gives the
// CLI its W3C traceparent in TRACEPARENT; one without gives none.
func TestRunnerPassesTheTrace(t *testing.T) {
	t.Parallel()
	f := newFake(t, "replay", "success_tool_use.jsonl")
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:     trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
		TraceFlags: trace.FlagsSampled,
	})
	f.run(trace.ContextWithSpanContext(context.Background(), sc), agentchat.RunRequest{Message: "traced"})
	f.run(context.Background(), agentchat.RunRequest{Message: "not traced"})
	inv := f.invocations()
	require.Len(t, inv, 2)
	require.Equal(t, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", inv[0].TraceParent)
	require.Empty(t, inv[1].TraceParent)
}

// TestRunnerReturnsAfterItsLastEvent: a run stopped while its events are
// still being handled (a slow store) returns only once the last of them
// is, and its own stop event comes after them: the service stores a run's
// closing status once Run returns, and no event of the run may follow it.
func TestRunnerReturnsAfterItsLastEvent(t *testing.T) {
	t.Parallel()
	f := newFake(t, "ignore-term", "")
	f.runner.KillGrace = 100 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	var mu sync.Mutex
	returned := false
	var seen, late []agentchat.EventType
	res, err := f.runner.Run(ctx, agentchat.RunRequest{Message: "hi", OnEvent: func(e agentchat.Event) {
		if e.Type == agentchat.EventSystem {
			time.Sleep(time.Second) // the init event is stored slowly
		}
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, e.Type)
		if returned {
			late = append(late, e.Type)
		}
	}})
	mu.Lock()
	returned = true
	mu.Unlock()
	require.NoError(t, err)
	require.Equal(t, "cancelled", res.Stopped)
	require.Equal(t, "fake-session", res.SessionID)
	time.Sleep(1500 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	require.Empty(t, late, "no event after Run returned")
	require.Equal(t, []agentchat.EventType{agentchat.EventSystem, agentchat.EventError}, seen)
}
