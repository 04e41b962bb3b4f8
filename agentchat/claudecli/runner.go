package claudecli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/agorahq/agora/agentchat"
)

// StderrTail is how much of the CLI's stderr a run keeps for messages.
const StderrTail = 10 << 10

// Runner is an agentchat.Runner that runs `claude -p --output-format
// stream-json --verbose` once per message, in its own process group so
// that a stop reaches the tools it started too. The zero value runs
// "claude" from PATH in the server's directory with the default timeouts.
type Runner struct {
	Path         string        // the CLI; default "claude" on PATH
	Dir          string        // the agent's working directory (cmd.Dir: the CLI has no --cwd)
	Env          []string      // extra KEY=value pairs (a host's env file), after the server's own
	SystemPrompt string        // appended with --append-system-prompt
	PromptFile   string        // a file appended to the system prompt too (agent_prompt)
	AllowedTools []string      // --allowedTools (run without asking); nil keeps the CLI's default
	Tools        []string      // --tools (the tools offered at all); nil keeps the CLI's default, empty offers none
	NoSession    bool          // --no-session-persistence: keep nothing on disk (such a run cannot be resumed)
	IdleTimeout  time.Duration // no output for this long stops the run; default 300 s
	TotalTimeout time.Duration // default 600 s
	KillGrace    time.Duration // SIGTERM to SIGKILL; default 5 s
	AfterResult  time.Duration // a process alive this long after its result is killed; default 5 s
}

var _ agentchat.Runner = (*Runner)(nil)

func (r *Runner) defaults() Runner {
	c := *r
	if c.Path == "" {
		c.Path = "claude"
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = 300 * time.Second
	}
	if c.TotalTimeout == 0 {
		c.TotalTimeout = 600 * time.Second
	}
	if c.KillGrace == 0 {
		c.KillGrace = 5 * time.Second
	}
	if c.AfterResult == 0 {
		c.AfterResult = 5 * time.Second
	}
	return c
}

// Run implements agentchat.Runner, with one automatic fallback: when resuming fails,
// the message is sent again without --resume and with the history in the
// prompt.
func (r *Runner) Run(ctx context.Context, req agentchat.RunRequest) (agentchat.RunResult, error) {
	c := r.defaults()
	emit := req.OnEvent
	if emit == nil {
		emit = func(agentchat.Event) {}
	}
	if req.SessionID == "" {
		return c.attempt(ctx, req.Message, "", emit)
	}
	// Hold back the failed attempt's events: if it fails to resume, its
	// error is replaced by the fallback's own run.
	var held []agentchat.Event
	res, p, err := c.attemptParsed(ctx, req.Message, req.SessionID, func(e agentchat.Event) { held = append(held, e) })
	if err != nil {
		return res, err
	}
	if !(p.Result.ResumeFailed(res.Stderr) && res.Stopped == "") {
		for _, e := range held {
			emit(e)
		}
		return res, nil
	}
	emit(agentchat.Event{Type: agentchat.EventSystem, Content: "could not resume the session; starting a new one with the conversation so far"})
	res, err = c.attempt(ctx, withHistory(req.History, req.Message), "", emit)
	res.FellBack = true
	return res, err
}

// withHistory puts the conversation so far in front of the message.
func withHistory(history []agentchat.Turn, message string) string {
	if len(history) == 0 {
		return message
	}
	var b strings.Builder
	b.WriteString("The conversation so far (the previous session could not be resumed):\n\n")
	for _, t := range history {
		fmt.Fprintf(&b, "[%s]\n%s\n\n", t.Role, t.Content)
	}
	b.WriteString("[user, now]\n")
	b.WriteString(message)
	return b.String()
}

func (c Runner) attempt(ctx context.Context, message, resume string, emit func(agentchat.Event)) (agentchat.RunResult, error) {
	res, _, err := c.attemptParsed(ctx, message, resume, emit)
	return res, err
}

func (c Runner) args(resume string) ([]string, error) {
	args := []string{"-p", "--output-format", "stream-json", "--verbose"}
	if resume != "" {
		args = append(args, "--resume="+resume) // the = form: an ID starting with '-' stays an ID
	}
	prompt := c.SystemPrompt
	if c.PromptFile != "" {
		b, err := os.ReadFile(c.PromptFile)
		if err != nil {
			return nil, fmt.Errorf("claudecli: agent prompt: %w", err)
		}
		prompt = strings.TrimSpace(prompt + "\n\n" + string(b))
	}
	if prompt != "" {
		args = append(args, "--append-system-prompt", prompt)
	}
	if c.AllowedTools != nil {
		args = append(args, "--allowedTools", strings.Join(c.AllowedTools, ","))
	}
	if c.Tools != nil {
		args = append(args, "--tools", strings.Join(c.Tools, ","))
	}
	if c.NoSession {
		args = append(args, "--no-session-persistence")
	}
	return args, nil
}

// tail keeps the last n bytes written to it.
type tail struct {
	mu  sync.Mutex
	n   int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.n {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.n:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

func (c Runner) attemptParsed(ctx context.Context, message, resume string, emit func(agentchat.Event)) (agentchat.RunResult, *Parser, error) {
	args, err := c.args(resume)
	if err != nil {
		return agentchat.RunResult{}, nil, err
	}
	cmd := exec.Command(c.Path, args...)
	cmd.Dir = c.Dir
	cmd.Env = append(append(append(os.Environ(), c.Env...), "AGORA_AGENT=1"), traceEnv(ctx)...)
	cmd.Stdin = strings.NewReader(message)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // signals reach the CLI's children too
	stderr := &tail{n: StderrTail}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return agentchat.RunResult{}, nil, err
	}
	if err := cmd.Start(); err != nil {
		return agentchat.RunResult{}, nil, fmt.Errorf("claudecli: start %s: %w", c.Path, err)
	}

	p := &Parser{SessionID: resume}
	activity := make(chan struct{}, 1)
	resultSeen := make(chan struct{})
	// readDone closes once the reader has emitted its last event: p and
	// emit belong to the reader until then, so the run waits for it before
	// it reads p or emits an event of its own, and never returns while an
	// event of the process is still being handled.
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		var once sync.Once
		_ = ReadLines(stdout, func(b []byte) error {
			select {
			case activity <- struct{}{}:
			default:
			}
			evs, err := p.ParseLine(b)
			if err != nil {
				return nil // a stray line: skip it
			}
			for _, e := range evs {
				emit(e)
			}
			if p.Result != nil {
				once.Do(func() { close(resultSeen) })
			}
			return nil
		})
	}()

	stop := func(why string) string {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-readDone:
		case <-time.After(c.KillGrace):
		}
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		return why
	}
	idle := time.NewTimer(c.IdleTimeout)
	total := time.NewTimer(c.TotalTimeout)
	defer idle.Stop()
	defer total.Stop()
	var after <-chan time.Time
	stopped := ""
loop:
	for {
		select {
		case <-readDone:
			break loop
		case <-activity:
			if !idle.Stop() {
				select {
				case <-idle.C:
				default:
				}
			}
			idle.Reset(c.IdleTimeout)
		case <-resultSeen:
			resultSeen = nil
			after = time.After(c.AfterResult)
		case <-after:
			stopped = stop("the process was still running after its result")
			break loop
		case <-idle.C:
			stopped = stop(fmt.Sprintf("no output for %s", c.IdleTimeout))
			break loop
		case <-total.C:
			stopped = stop(fmt.Sprintf("still running after %s", c.TotalTimeout))
			break loop
		case <-ctx.Done():
			stopped = stop("cancelled")
			break loop
		}
	}
	// Reap the process (giving one whose output ended the grace to exit by
	// itself, so its exit code is its own), then kill what is left of its
	// group: no zombie, no stray child.
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-waited:
	case <-time.After(c.KillGrace):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		werr = <-waited
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	// Wait closed the pipe, so the reader ends even if something outside
	// the group holds the other end; a slow emit is waited for.
	<-readDone
	res := agentchat.RunResult{SessionID: p.SessionID, Stopped: stopped, Stderr: stderr.String()}
	var exit *exec.ExitError
	if errors.As(werr, &exit) {
		res.ExitCode = exit.ExitCode()
	}
	if p.Result == nil {
		msg := "the agent exited without a result"
		switch {
		case stopped != "":
			msg = "the agent was stopped: " + stopped
		case res.ExitCode != 0:
			msg = fmt.Sprintf("the agent exited with code %d", res.ExitCode)
		}
		if t := lastLine(res.Stderr); t != "" && stopped == "" {
			msg += ": " + t
		}
		emit(agentchat.Event{Type: agentchat.EventError, Content: msg})
	}
	return res, p, nil
}

// lastLine returns the last non-empty line of s, trimmed to 500 bytes.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	l := strings.TrimSpace(lines[len(lines)-1])
	if len(l) > 500 {
		l = l[len(l)-500:]
	}
	return l
}

// traceEnv is TRACEPARENT (and TRACESTATE) of the trace ctx carries, as
// OpenTelemetry's environment carrier names them, so a CLI that traces
// joins the request's trace; none when ctx carries no trace.
func traceEnv(ctx context.Context) []string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return nil
	}
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	var env []string
	for _, k := range []string{"traceparent", "tracestate"} {
		if v := carrier.Get(k); v != "" {
			env = append(env, strings.ToUpper(k)+"="+v)
		}
	}
	return env
}
