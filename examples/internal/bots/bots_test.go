package bots_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/examples/internal/bots"
	"github.com/agorahq/agora/examples/internal/memserver"
	"github.com/agorahq/agora/httpapi/client"
	"github.com/agorahq/agora/httpapi/mcp"
	"github.com/agorahq/agora/httpapi/server"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/internal/fakeanthropic"
	"github.com/agorahq/agora/slots"
)

// brain answers every prompt with text and err, and keeps the prompts.
type brain struct {
	text string
	err  error

	mu      sync.Mutex
	prompts []bots.Prompt
}

func (b *brain) Write(_ context.Context, p bots.Prompt) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.prompts = append(b.prompts, p)
	return b.text, b.err
}

// setup starts a server on the memory store until the test ends and
// returns a client with its admin key.
func setup(t *testing.T) (context.Context, *client.Client) {
	t.Helper()
	ctx, base := serve(t)
	return ctx, client.New(base, client.WithToken("adm"))
}

// serve starts a server on the memory store until the test ends and
// returns its base URL; its admin key is "adm".
func serve(t *testing.T) (context.Context, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	base, _, err := memserver.Start(ctx, "adm", server.Options{})
	require.NoError(t, err)
	return ctx, base
}

// critique opens one critic seat on a new claim with a draft and returns
// the client of an agent that may take it.
func critique(t *testing.T, ctx context.Context, c *client.Client, title string) (client.Claim, *client.Client) {
	t.Helper()
	op, err := c.CreateKey(ctx, identity.NewKey{Name: "operator-" + title, Scopes: []identity.Scope{slots.ScopeClaimCreate, slots.ScopeSlotsConfigure, slots.ScopeCommentCreate}})
	require.NoError(t, err)
	h := c.As(op.Key)
	claim, err := h.CreateClaim(ctx, client.NewClaim{Title: title, Body: "Honeybees tell four landmarks from five.", Domain: "biology"})
	require.NoError(t, err)
	_, err = h.Comment(ctx, claim.ID, client.NewComment{Body: "Draft: counting up to four is well supported.", CommentType: string(slots.CommentDraft)})
	require.NoError(t, err)
	_, err = h.ConfigureSlots(ctx, claim.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 1})
	require.NoError(t, err)
	k, err := c.CreateKey(ctx, identity.NewKey{Name: "critic-" + title, Scopes: []identity.Scope{slots.ScopeCommentCreate}})
	require.NoError(t, err)
	return claim, c.As(k.Key)
}

// comment takes the claim's critic seat with opts and returns the comment
// it posted.
func comment(t *testing.T, ctx context.Context, c *client.Client, title string, seed uint64, opts ...bots.Option) string {
	t.Helper()
	claim, agent := critique(t, ctx, c, title)
	job, err := bots.SlotAgent(ctx, agent, slots.RoleCritic, 0, seed, opts...)
	require.NoError(t, err)
	return criticism(t, ctx, c, claim, job).Body
}

// criticism is the comment the critic that took job posted on claim.
func criticism(t *testing.T, ctx context.Context, c *client.Client, claim client.Claim, job slots.Job) client.Comment {
	t.Helper()
	require.Equal(t, claim.ID, job.Claim.ID)
	cs, err := c.Comments(ctx, claim.ID, slots.CommentsParams{Sort: slots.CommentsOld, Limit: slots.MaxCommentsLimit})
	require.NoError(t, err)
	require.Len(t, cs, 2, "the draft and the critic's comment")
	require.Equal(t, string(slots.CommentCriticism), cs[1].CommentType)
	return cs[1]
}

// TestFailingBrainFallsBackToTemplate: when the brain fails, a role-slot
// agent still posts its comment — the very text the template brain writes
// from the same seed — and marks its seat done, and a responder still
// answers with its template text; each fallback is logged with its action
// and the brain's error.
func TestFailingBrainFallsBackToTemplate(t *testing.T) {
	t.Parallel()
	ctx, c := setup(t)
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	failing := bots.WithBrain(&brain{err: errors.New("the CLI crashed")})

	want := comment(t, ctx, c, "template", 7)
	got := comment(t, ctx, c, "failing", 7, failing, bots.WithLogger(log))
	require.Equal(t, want, got)
	require.Contains(t, logs.String(), `action="role-slot comment"`)
	require.Contains(t, logs.String(), `err="the CLI crashed"`)

	logs.Reset()
	empty := bots.WithBrain(&brain{text: "  \n"})
	require.Equal(t, want, comment(t, ctx, c, "empty", 7, empty, bots.WithLogger(log)), "an empty answer is a failure too")
	require.Contains(t, logs.String(), `err="an empty answer"`)

	logs.Reset()
	p, err := c.AskSquad(ctx, client.Question{RequesterAgent: "Developer", PromptMessage: "What should I check?", RequiredResponses: 1, TimeoutMinutes: 5})
	require.NoError(t, err)
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	go bots.Responder(rctx, c, "Builder", failing, bots.WithLogger(log))
	p, err = c.WaitForDiscussion(ctx, p.ID)
	require.NoError(t, err)
	require.Len(t, p.CollectedContext, 1)
	require.Equal(t, bots.AnswerTemplate("Builder"), p.CollectedContext[0].Message)
	stop()
	require.Contains(t, logs.String(), `action="discussion answer"`)
}

// TestBrainWritesTheComment: a role-slot agent posts what its brain
// wrote, from a prompt naming its role, the comment type, the claim and
// the comments so far, with the template text alongside.
func TestBrainWritesTheComment(t *testing.T) {
	t.Parallel()
	ctx, c := setup(t)
	b := &brain{text: "Only captive bees were tested."}
	require.Equal(t, "Only captive bees were tested.", comment(t, ctx, c, "Bees count", 3, bots.WithBrain(b)))
	require.Len(t, b.prompts, 1)
	p := b.prompts[0]
	for _, want := range []string{"critic", "criticism", `"Bees count"`, "Honeybees tell four landmarks from five.", "Draft: counting up to four is well supported.", "weaknesses"} {
		require.Contains(t, p.Text, want)
	}
	require.Equal(t, comment(t, ctx, c, "template", 3), p.Template)
}

// TestLongAnswerIsCut: an answer longer than the server takes is cut to
// fit, so the action is not refused.
func TestLongAnswerIsCut(t *testing.T) {
	t.Parallel()
	ctx, c := setup(t)
	b := &brain{text: strings.Repeat("é", slots.MaxCommentLen+10)}
	got := comment(t, ctx, c, "long", 1, bots.WithBrain(b))
	require.Equal(t, slots.MaxCommentLen, utf8.RuneCountInString(got))
	require.True(t, strings.HasSuffix(got, "é…"))
}

// TestClaudeBrain runs the real Claude Code CLI against a fake Messages
// API: Write returns the model's answer to the prompt, with no tool
// offered; a CLI that fails is an error (the bots then fall back).
func TestClaudeBrain(t *testing.T) {
	t.Parallel()
	api := fakeanthropic.Start(t, func(prompt string) string { return "You said: " + prompt })
	b, err := bots.NewClaude(fakeanthropic.CLI(t))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, b.Close()) })
	b.CLI.Env = api.Env(t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	text, err := b.Write(ctx, bots.Prompt{Text: "Argue for the five.", Template: "Five lives outweigh one."})
	require.NoError(t, err)
	require.Equal(t, "You said: Argue for the five.", text)
	require.Zero(t, api.ToolRequests())

	b.CLI.Path = "false" // exits 1 without a word
	_, err = b.Write(ctx, bots.Prompt{Text: "Argue for the five."})
	require.ErrorContains(t, err, "claude: the agent exited with code 1")
}

// TestAnswerTemplatesDiffer: the demo's squad answers with three different
// sentences, none repeating its speaker's name (the chat names it).
func TestAnswerTemplatesDiffer(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, name := range []string{"Builder", "Critic", "Growth"} {
		a := bots.AnswerTemplate(name)
		require.NotContains(t, a, name)
		require.False(t, seen[a], "%s answers as another member does: %s", name, a)
		seen[a] = true
		require.Equal(t, a, bots.AnswerTemplate(name), "the same on every run")
	}
}

// TestSlotAgentMCP: an agent working through the MCP tools at /mcp takes
// the claim's critic seat, posts the comment the HTTP agent would from the
// same seed, and its seat is done and credited to its key.
func TestSlotAgentMCP(t *testing.T) {
	t.Parallel()
	ctx, base := serve(t)
	c := client.New(base, client.WithToken("adm"))
	want := comment(t, ctx, c, "over-http", 9)

	claim, _ := critique(t, ctx, c, "over-mcp")
	k, err := c.CreateKey(ctx, identity.NewKey{Name: "mcp-critic", Scopes: []identity.Scope{slots.ScopeCommentCreate}})
	require.NoError(t, err)
	s, err := mcp.Dial(ctx, base+"/mcp", k.Key, nil)
	require.NoError(t, err)
	defer s.Close()
	job, err := bots.SlotAgentMCP(ctx, s, slots.RoleCritic, 9)
	require.NoError(t, err)
	got := criticism(t, ctx, c, claim, job)
	require.Equal(t, want, got.Body)
	require.Equal(t, "mcp-critic", got.AgentName)
	list, err := c.Slots(ctx, claim.ID)
	require.NoError(t, err)
	require.Equal(t, string(slots.StatusDone), list[0].Status)
	require.Equal(t, k.ID, list[0].APIKeyID)
}
