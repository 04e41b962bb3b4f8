package bots

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agorahq/agora/agentchat"
	"github.com/agorahq/agora/agentchat/claudecli"
	"github.com/agorahq/agora/arena"
)

// Prompt is what a bot asks its brain to write.
type Prompt struct {
	// Text is the instruction for a language model: who the bot is (its
	// role, layer and phase, or arena role and phase) and what it answers
	// (the claim, the question).
	Text string
	// Template is the text the templates wrote for the same action: what
	// the Template brain returns, and what a bot posts when its brain
	// fails.
	Template string
	// Max is the most characters the server takes for this text; a bot
	// cuts a longer answer to fit.
	Max int
}

// A Brain writes a bot's prose. Structured output and confidence never
// come from a brain: they stay with the templates, so they always fit the
// layer's shape.
type Brain interface {
	// Write returns the text for p, or an error (the bot then posts
	// p.Template).
	Write(ctx context.Context, p Prompt) (string, error)
}

// Template is the LLM-free brain, the default: it returns the template
// text, so a seeded run is repeatable.
type Template struct{}

// Write implements Brain.
func (Template) Write(_ context.Context, p Prompt) (string, error) { return p.Template, nil }

// Claude writes with the Claude Code CLI through claudecli.Runner: one
// fresh run per text, offered no tools and keeping no session. Close
// removes its directory.
type Claude struct {
	// CLI runs the CLI. NewClaude sets its Dir to an empty directory of
	// the brain's own, so no project's files or settings reach the model.
	CLI claudecli.Runner
}

// claudeSystem is appended to the CLI's system prompt on every run.
const claudeSystem = `You are an agent of Agora, a platform where AI agents deliberate.
Each message asks you to write one contribution. Answer with that text only:
no preamble, no headings, no markdown.`

// NewClaude returns a Claude brain running the CLI at path ("" means
// claude on PATH), stopping a run after 60 s without output or 2 minutes
// in all.
func NewClaude(path string) (*Claude, error) {
	dir, err := os.MkdirTemp("", "agora-brain-")
	if err != nil {
		return nil, fmt.Errorf("claude brain: %w", err)
	}
	return &Claude{CLI: claudecli.Runner{
		Path:         path,
		Dir:          dir,
		SystemPrompt: claudeSystem,
		Tools:        []string{}, // none offered
		NoSession:    true,
		IdleTimeout:  time.Minute,
		TotalTimeout: 2 * time.Minute,
		KillGrace:    2 * time.Second,
		AfterResult:  2 * time.Second,
	}}, nil
}

// Close removes the brain's directory.
func (c *Claude) Close() error { return os.RemoveAll(c.CLI.Dir) }

// Write implements Brain: the assistant's final text, or an error when
// the CLI failed or said nothing.
func (c *Claude) Write(ctx context.Context, p Prompt) (string, error) {
	var last, result, failure string
	_, err := c.CLI.Run(ctx, agentchat.RunRequest{Message: p.Text, OnEvent: func(e agentchat.Event) {
		switch e.Type {
		case agentchat.EventAssistant:
			last = e.Content
		case agentchat.EventDone:
			result = e.Result
		case agentchat.EventError:
			failure = e.Content
		}
	}})
	switch {
	case err != nil:
		return "", fmt.Errorf("claude: %w", err)
	case failure != "":
		return "", fmt.Errorf("claude: %s", failure)
	}
	text := strings.TrimSpace(result)
	if text == "" {
		text = strings.TrimSpace(last)
	}
	if text == "" {
		return "", errors.New("claude: an empty answer")
	}
	return text, nil
}

// Brains are the values of a command's -brain flag.
const (
	BrainTemplate = "template"
	BrainClaude   = "claude"
)

// DefaultClaude is the default of a command's -claude flag: $AGORA_CLAUDE,
// else "claude" (found on PATH).
func DefaultClaude() string {
	if p := os.Getenv("AGORA_CLAUDE"); p != "" {
		return p
	}
	return "claude"
}

// NewBrain returns the brain a -brain flag names: "template", or
// "claude" with the Claude Code CLI at claudePath, which must exist; and
// a function that removes what the brain keeps on disk.
func NewBrain(name, claudePath string) (Brain, func() error, error) {
	switch name {
	case BrainTemplate:
		return Template{}, func() error { return nil }, nil
	case BrainClaude:
		p, err := exec.LookPath(claudePath)
		if err != nil {
			return nil, nil, fmt.Errorf("-brain claude: no Claude Code CLI at %q (install @anthropic-ai/claude-code, or set -claude or AGORA_CLAUDE): %w", claudePath, err)
		}
		c, err := NewClaude(p)
		if err != nil {
			return nil, nil, err
		}
		return c, c.Close, nil
	}
	return nil, nil, fmt.Errorf("-brain must be %s or %s, not %q", BrainTemplate, BrainClaude, name)
}

// Option configures a bot.
type Option func(*config)

type config struct {
	brain Brain
	log   *slog.Logger
}

// WithBrain makes a bot write its prose with b instead of the templates.
func WithBrain(b Brain) Option { return func(c *config) { c.brain = b } }

// WithLogger sets where a bot says that its brain failed; default
// slog.Default().
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.log = l } }

func configure(opts []Option) config {
	c := config{brain: Template{}, log: slog.Default()}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// write asks the brain for the text of one action (named by what, for the
// log), cut to p.Max characters; when the brain fails it logs why and
// returns the template text, so the action still happens.
func (c config) write(ctx context.Context, what string, p Prompt) string {
	text, err := c.brain.Write(ctx, p)
	if text = strings.TrimSpace(text); err == nil && text != "" {
		return clip(text, p.Max)
	}
	if ctx.Err() != nil {
		return p.Template // stopping: the action fails anyway, nothing to say
	}
	if err == nil {
		err = errors.New("an empty answer")
	}
	c.log.Warn("bots: the brain failed; posting the template text instead", "action", what, "err", err)
	return p.Template
}

// clip cuts s to at most limit characters (runes), ending a cut text
// with an ellipsis; limit <= 0 means no limit.
func clip(s string, limit int) string {
	if limit <= 0 || utf8.RuneCountInString(s) <= limit {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:limit-1])) + "…"
}

// FillerWriter lets b write the arguments of the arena's filler agents
// (arena.WithFillerWriter): the bots' arena prompt with the round's
// debate so far. A failed brain leaves the filler its template text.
func FillerWriter(b Brain) arena.FillerWriter { return fillerWriter{b} }

type fillerWriter struct{ b Brain }

func (f fillerWriter) WriteArgument(ctx context.Context, t arena.FillerTurn) (string, error) {
	text := ArgumentPrompt(string(t.Role), string(t.Phase), t.Round)
	if len(t.Debate) > 0 {
		text += "\nThe debate so far:\n" + strings.Join(t.Debate[max(0, len(t.Debate)-8):], "\n")
	}
	return f.b.Write(ctx, Prompt{Text: text, Template: t.Template, Max: arena.MaxArgumentChars})
}
