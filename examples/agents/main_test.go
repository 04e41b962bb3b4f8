package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/examples/internal/memserver"
	"github.com/agorahq/agora/httpapi/client"
	"github.com/agorahq/agora/httpapi/server"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/internal/fakeanthropic"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/store"
)

// startServer runs the all-in-one server on the memory store until ctx
// ends and returns its URL; its admin key is "adm".
func startServer(t *testing.T, ctx context.Context, opts server.Options) string {
	t.Helper()
	base, _, err := memserver.Start(ctx, "adm", opts)
	require.NoError(t, err)
	return base
}

// until polls cond until it holds. It sets no deadline of its own: how long
// the agents take depends on the machine, and a run that never gets there
// is stopped by go test's -timeout.
func until(t *testing.T, cond func() bool) {
	t.Helper()
	for !cond() {
		time.Sleep(50 * time.Millisecond)
	}
}

// TestPrismWorkersAgainstAServer runs the command's Prism workers against
// a server and sees a claim complete.
func TestPrismWorkersAgainstAServer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base := startServer(t, ctx, server.Options{})
	c := client.New(base, client.WithToken("adm"))
	claim, err := c.CreateClaim(ctx, client.NewClaim{Title: "t", Body: "b"})
	require.NoError(t, err)
	agentsCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- run(agentsCtx, []string{"-server", base, "-admin-key", "adm", "-prism", "16"}) }()
	until(t, func() bool {
		p, err := c.Pipeline(ctx, claim.ID)
		return err == nil && p.Status == string(prism.StatusComplete)
	})
	stop()
	require.NoError(t, <-done)
}

// TestAgentsOnAServerThatRequiresKeys: with -require-keys on the server,
// the command's responders take a prompt to its quorum and its players a
// game to its end, each acting with a key of its own.
func TestAgentsOnAServerThatRequiresKeys(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base := startServer(t, ctx, server.Options{RequireKeys: true})
	_, err := client.New(base).Games(ctx, "")
	require.ErrorIs(t, err, store.ErrUnauthorized, "the server requires keys")
	c := client.New(base, client.WithToken("adm"))
	game, err := c.CreateGame(ctx, client.NewGame{MinPlayers: 3})
	require.NoError(t, err)
	asker, err := c.CreateKey(ctx, identity.NewKey{Name: "Developer", Scopes: []identity.Scope{discussion.ScopeWrite}})
	require.NoError(t, err)
	p, err := c.As(asker.Key).AskSquad(ctx, client.Question{RequesterAgent: "Developer", PromptMessage: "ship?", RequiredResponses: 2})
	require.NoError(t, err)
	agentsCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- run(agentsCtx, []string{"-server", base, "-admin-key", "adm", "-responders", "Builder,Critic", "-arena", game, "-players", "3"})
	}()
	until(t, func() bool {
		s, err := c.WaitState(ctx, game, -1, 0)
		return err == nil && len(s.Coverage) == 3
	})
	require.NoError(t, c.StartGame(ctx, game))
	until(t, func() bool {
		v, err := c.Prompt(ctx, p.ID, 0)
		s, err2 := c.WaitState(ctx, game, -1, 0)
		return err == nil && err2 == nil && v.Ready && s.Status == "game_completed"
	})
	stop()
	require.NoError(t, <-done)
}

// TestBadBrainFlags: an unknown -brain, or -brain claude without a CLI,
// stops the command before it starts any agent, saying what is wrong.
func TestBadBrainFlags(t *testing.T) {
	err := run(context.Background(), []string{"-brain", "gpt"})
	require.ErrorContains(t, err, `-brain must be template or claude, not "gpt"`)
	err = run(context.Background(), []string{"-brain", "claude", "-claude", t.TempDir() + "/no-such-claude"})
	require.ErrorContains(t, err, "no Claude Code CLI at")
}

// TestClaudeBrainAgainstAServer runs the command with -brain claude: the
// real Claude Code CLI, talking to a fake Messages API that echoes the
// first line of each prompt, writes the Prism stage texts and a discussion
// answer. The texts posted are the model's, from prompts naming the role
// and layer (or the responder), with no tool offered to the model, while
// the structured output still comes from the templates and validates: the
// pipeline moves past Classification, the first layer that requires it,
// and the claim gets its domain.
func TestClaudeBrainAgainstAServer(t *testing.T) {
	bin := fakeanthropic.CLI(t)
	api := fakeanthropic.Start(t, func(prompt string) string {
		if first, _, _ := strings.Cut(prompt, "\n"); strings.HasPrefix(first, "You ") {
			return "model heard: " + first
		}
		return "" // anything else the CLI asks gets the fake's script
	})
	for _, kv := range api.Env(t.TempDir()) { // the CLI inherits the command's environment
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base := startServer(t, ctx, server.Options{})
	c := client.New(base, client.WithToken("adm"))
	claim, err := c.CreateClaim(ctx, client.NewClaim{Title: "Crows plan ahead", Body: "Scrub jays cache food where they will need it."})
	require.NoError(t, err)
	question, err := c.AskSquad(ctx, client.Question{RequesterAgent: "Developer", PromptMessage: "What should I check before shipping?", RequiredResponses: 1, TimeoutMinutes: 5})
	require.NoError(t, err)

	agentsCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() {
		done <- run(agentsCtx, []string{"-server", base, "-admin-key", "adm", "-prism", "6", "-responders", "Builder",
			"-brain", "claude", "-claude", bin})
	}()

	answered, err := c.WaitForDiscussion(ctx, question.ID)
	require.NoError(t, err)
	require.NotEmpty(t, answered.CollectedContext)
	require.Equal(t, "Builder", answered.CollectedContext[0].Agent)
	require.Equal(t, "model heard: You are Builder, one member of an agent squad. Developer asks the squad:", answered.CollectedContext[0].Message)

	until(t, func() bool { // the pipeline moved past Classification
		p, err := c.Pipeline(ctx, claim.ID)
		return err == nil && (p.CurrentLayer > 2 || p.Status == string(prism.StatusComplete))
	})
	stop()
	require.NoError(t, <-done)
	require.Zero(t, api.ToolRequests(), "the brain's runs offered the model no tool")

	got, err := c.Claim(ctx, claim.ID)
	require.NoError(t, err)
	require.NotEmpty(t, got.Domain, "layer 2's structured output set the domain")
	var view struct {
		Layers []struct {
			Layer int               `json:"layer"`
			Slots []prism.StageSlot `json:"slots"`
		} `json:"layers"`
	}
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/api/v1/claims/"+claim.ID+"/pipeline", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer adm")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.NoError(t, json.NewDecoder(res.Body).Decode(&view))
	l2 := view.Layers[1]
	require.Equal(t, 2, l2.Layer)
	require.Len(t, l2.Slots, 4)
	for _, s := range l2.Slots {
		require.Equal(t, "model heard: You are the "+s.Role+" of layer 2 (Classification) of a Prism deliberation, "+string(s.Phase)+" phase.", s.Body)
		if s.Phase == prism.PhaseWork {
			var out struct{ Domain string }
			require.NoError(t, json.Unmarshal(s.Output, &out))
			require.NotEmpty(t, out.Domain, "the template's output was submitted with the model's text")
		}
	}
}
