package mcp_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/httpapi/mcp"
	"github.com/agorahq/agora/httpapi/wire"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/internal/testbackend"
	"github.com/agorahq/agora/internal/testdb"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/storetest"
)

// TestMain stops the database servers internal/testdb started for the
// tests, which run on every backend of internal/testbackend.
func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

const adminToken = "test-admin-token"

// bundle is what a test works with: the services over one backend's
// stores.
type bundle struct {
	svcs mcp.Services
}

func setup(t *testing.T, st storetest.Stores) bundle {
	t.Helper()
	svc := slots.New(st.Slots, slots.WithNotifier(st.Notifier))
	ids := identity.New(st.Identity, identity.WithAdminKey(adminToken), identity.WithScopes(httpapi.Scopes()))
	return bundle{svcs: mcp.Services{
		Identity:   ids,
		Slots:      svc,
		Prism:      prism.New(st.Prism, st.Slots, prism.WithNotifier(st.Notifier)),
		Arena:      arena.New(st.Arena, arena.WithNotifier(st.Notifier)),
		Discussion: discussion.New(st.Discussion, discussion.WithNotifier(st.Notifier)),
	}}
}

// key creates an API key and returns its token.
func (b bundle) key(t *testing.T, name string, scopes ...identity.Scope) string {
	t.Helper()
	_, token, err := b.svcs.Identity.CreateKey(identity.WithKey(context.Background(), b.svcs.Identity.Admin()), identity.NewKey{Name: name, Scopes: scopes})
	require.NoError(t, err)
	return token
}

// connect is an MCP client session of the key token, over the SDK's
// in-memory transport.
func (b bundle) connect(t *testing.T, token string) *sdk.ClientSession {
	t.Helper()
	return connectTo(t, mcp.NewServer(b.svcs, mcp.Options{Token: token}))
}

func connectTo(t *testing.T, srv *sdk.Server) *sdk.ClientSession {
	t.Helper()
	return connectWith(t, srv, nil, nil)
}

func connectWith(t *testing.T, srv *sdk.Server, opts *sdk.ClientOptions, session *sdk.ClientSessionOptions, receiving ...sdk.Middleware) *sdk.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, st := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	require.NoError(t, err)
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, opts)
	c.AddReceivingMiddleware(receiving...)
	cs, err := c.Connect(ctx, ct, session)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close(); _ = ss.Wait() })
	return cs
}

// call calls a tool and returns its result; a protocol error fails the
// test.
func call(t *testing.T, cs *sdk.ClientSession, tool string, args any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	require.NoError(t, err, "%s: a protocol error", tool)
	return res
}

// ok calls a tool that must succeed, checks its structured result against
// the output schema the tool lists (the server does not validate its own
// answers on each call: the tests do) and decodes it.
func ok[T any](t *testing.T, cs *sdk.ClientSession, tool string, args any) T {
	t.Helper()
	res := call(t, cs, tool, args)
	require.False(t, res.IsError, "%s: %s", tool, text(res))
	require.NotEmpty(t, text(res), "%s: a text for the model", tool)
	raw, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	var doc any
	require.NoError(t, json.Unmarshal(raw, &doc))
	require.NoError(t, outputSchema(t, cs, tool).Validate(doc), "%s answered outside its output schema: %s", tool, raw)
	var out T
	require.NoError(t, json.Unmarshal(raw, &out), "%s: %s", tool, raw)
	return out
}

// fails calls a tool that must fail and returns its error.
func fails(t *testing.T, cs *sdk.ClientSession, tool string, args any) (mcp.Error, string) {
	t.Helper()
	res := call(t, cs, tool, args)
	require.True(t, res.IsError, "%s succeeded: %s", tool, text(res))
	e, _ := mcp.ParseError(text(res))
	return e, text(res)
}

// outputSchemas holds each tool's listed output schema, resolved, by
// name: every server of these tests lists the same tools.
var outputSchemas sync.Map

// outputSchema is the output schema tool lists on cs's server.
func outputSchema(t *testing.T, cs *sdk.ClientSession, tool string) *jsonschema.Resolved {
	t.Helper()
	if r, ok := outputSchemas.Load(tool); ok {
		return r.(*jsonschema.Resolved)
	}
	for listed, err := range cs.Tools(context.Background(), nil) {
		require.NoError(t, err)
		raw, err := json.Marshal(listed.OutputSchema)
		require.NoError(t, err)
		var s jsonschema.Schema
		require.NoError(t, json.Unmarshal(raw, &s), listed.Name)
		r, err := s.Resolve(nil)
		require.NoError(t, err, listed.Name)
		outputSchemas.Store(listed.Name, r)
	}
	r, ok := outputSchemas.Load(tool)
	require.True(t, ok, "%s is not listed", tool)
	return r.(*jsonschema.Resolved)
}

func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestToolsListed checks the tools' names and that each has an input and
// an output schema whose every property is described.
func TestToolsListed(t *testing.T) {
	t.Parallel()
	b := setup(t, testbackend.All()[0].New(t))
	cs := b.connect(t, b.key(t, "lister"))
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		require.NotEmpty(t, tool.Description, tool.Name)
		require.NotNil(t, tool.OutputSchema, tool.Name)
		in := tool.InputSchema.(map[string]any)
		props, _ := in["properties"].(map[string]any)
		for name, p := range props {
			require.NotEmpty(t, p.(map[string]any)["description"], "%s.%s has no description", tool.Name, name)
		}
	}
	require.ElementsMatch(t, []string{"take_job", "post_comment", "finish_job", "calibrate_claim", "my_profile", "take_work", "submit_work",
		"post_consensus", "list_games", "join_game", "game_state", "argue", "decide",
		"ask_squad", "pending_prompts", "answer_prompt", "wait_for_answers", "post_message", "read_messages"}, names)
}

// claimsWithSeats creates a claim of each title with its draft (a claim's
// seats are offered once it has one) and one critic seat.
func (b bundle) claimsWithSeats(t *testing.T, titles ...string) []string {
	t.Helper()
	ctx := context.Background()
	author, _, err := b.svcs.Identity.CreateKey(identity.WithKey(ctx, b.svcs.Identity.Admin()), identity.NewKey{Name: "author", Scopes: []identity.Scope{slots.ScopeCommentCreate}})
	require.NoError(t, err)
	var ids []string
	for _, title := range titles {
		c, err := b.svcs.Slots.CreateClaim(ctx, slots.NewClaim{Title: title, Body: "b"})
		require.NoError(t, err)
		_, err = b.svcs.Slots.ConfigureSlots(ctx, c.ID, []slots.RoleCount{{Role: slots.RoleCritic, Count: 1}})
		require.NoError(t, err)
		_, err = b.svcs.Slots.AddComment(identity.WithKey(ctx, author), slots.NewComment{ClaimID: c.ID, Body: "The draft.", CommentType: "draft"})
		require.NoError(t, err)
		ids = append(ids, c.ID)
	}
	return ids
}

type job struct {
	Slot struct {
		ID     string `json:"_id"`
		Role   string `json:"role"`
		Status string `json:"status"`
	} `json:"slot"`
	Claim struct {
		ID    string `json:"_id"`
		Title string `json:"title"`
	} `json:"claim"`
	Comments []struct {
		Body string `json:"body"`
	} `json:"comments"`
}

// TestRoleSlotTools takes, comments on and finishes seats through MCP on
// every backend, and checks the errors a model meets.
func TestRoleSlotTools(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		b := setup(t, st)
		b.claimsWithSeats(t, "Crows plan ahead", "Octopuses dream")
		agent := b.connect(t, b.key(t, "Skeptic-7", slots.ScopeCommentCreate))

		got := ok[struct{ Job *job }](t, agent, "take_job", map[string]any{"role": "critic"})
		require.NotNil(t, got.Job)
		require.Equal(t, "critic", got.Job.Slot.Role)
		require.Equal(t, "taken", got.Job.Slot.Status)
		first := got.Job

		c := ok[struct {
			CommentID string `json:"comment_id"`
		}](t, agent, "post_comment", map[string]any{"claim_id": first.Claim.ID, "body": "Only lab birds.", "comment_type": "criticism"})
		require.NotEmpty(t, c.CommentID)
		r := ok[struct {
			Comment struct {
				ParentCommentID string `json:"parentCommentId"`
			} `json:"comment"`
		}](t, agent, "post_comment", map[string]any{"claim_id": first.Claim.ID, "body": "And wild ones?", "comment_type": "question", "reply_to": c.CommentID})
		require.Equal(t, c.CommentID, r.Comment.ParentCommentID, "a reply")
		orphan, _ := fails(t, agent, "post_comment", map[string]any{"claim_id": first.Claim.ID, "body": "x", "comment_type": "question", "reply_to": "comment_none"})
		require.Equal(t, "parent_comment_not_found", orphan.Code)

		fin := ok[struct {
			OK   bool `json:"ok"`
			Next *job `json:"next"`
		}](t, agent, "finish_job", map[string]any{"claim_id": first.Claim.ID, "slot_id": first.Slot.ID, "take_next": true})
		require.True(t, fin.OK)
		require.NotNil(t, fin.Next)
		require.NotEqual(t, first.Claim.ID, fin.Next.Claim.ID)

		e, _ := fails(t, agent, "finish_job", map[string]any{"claim_id": first.Claim.ID, "slot_id": first.Slot.ID})
		require.NotEmpty(t, e.Code, "a domain error has the HTTP API's code")
		require.NotEmpty(t, e.Message)

		fin = ok[struct {
			OK   bool `json:"ok"`
			Next *job `json:"next"`
		}](t, agent, "finish_job", map[string]any{"claim_id": fin.Next.Claim.ID, "slot_id": fin.Next.Slot.ID})
		require.True(t, fin.OK)
		require.Nil(t, fin.Next)

		none := ok[struct{ Job *job }](t, agent, "take_job", nil)
		require.Nil(t, none.Job, "no seat left: job null, not an error")

		me := ok[mcp.ProfileOutput](t, agent, "my_profile", nil)
		require.Equal(t, "Skeptic-7", me.Name)
		require.Equal(t, []string{"comment:create"}, me.Scopes)
		require.Positive(t, me.Balance)

		// The key decides: one without comment:create is told which scope.
		reader := b.connect(t, b.key(t, "reader"))
		e, _ = fails(t, reader, "take_job", nil)
		require.Equal(t, "missing_scope", e.Code)
		require.Contains(t, e.Message, "comment:create")
		require.Equal(t, "reader", ok[mcp.ProfileOutput](t, reader, "my_profile", nil).Name)

		// A revoked or unknown key is unauthorized, a tool error too.
		stranger := b.connect(t, "agora_nope")
		e, _ = fails(t, stranger, "my_profile", nil)
		require.Equal(t, "invalid_api_key", e.Code, "the HTTP API's code for a bad key")

		// Bad arguments are tool errors that name the argument.
		_, msg := fails(t, agent, "post_comment", map[string]any{"claim_id": 7, "body": "x", "comment_type": "criticism"})
		require.Contains(t, msg, "claim_id")
		_, msg = fails(t, agent, "post_comment", map[string]any{"body": "x", "comment_type": "criticism"})
		require.Contains(t, msg, "claim_id")
		_, msg = fails(t, agent, "take_job", map[string]any{"rol": "critic"})
		require.Contains(t, msg, "rol")
		e, _ = fails(t, agent, "take_job", map[string]any{"role": "jester"})
		require.Equal(t, "invalid_role", e.Code)
		e, _ = fails(t, agent, "post_comment", map[string]any{"claim_id": first.Claim.ID, "body": "x", "comment_type": "shout"})
		require.Contains(t, e.Code, "comment_type")
	})
}

// TestCalibrateTool calibrates a claim through MCP on every backend with
// a key of no scope, as the HTTP route allows, and checks the refusals a
// model meets.
func TestCalibrateTool(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		ctx := context.Background()
		b := setup(t, st)
		claim := b.claimsWithSeats(t, "Entropy bounds compression")[0]
		agent := b.connect(t, b.key(t, "calibrator"))

		got := ok[mcp.CalibrateOutput](t, agent, "calibrate_claim", map[string]any{"claim_id": claim,
			"scores": []map[string]any{{"domain": "statistics", "score": 40}, {"domain": "information-theory", "score": 60}}})
		require.NotEmpty(t, got.CalibrationID)
		require.Equal(t, "information-theory", got.Domain)
		require.Equal(t, got.CalibrationID, got.Calibration.ID)
		require.Equal(t, "calibrator", got.Calibration.EditorName)
		c, err := b.svcs.Slots.Claim(ctx, claim)
		require.NoError(t, err)
		require.Equal(t, "information-theory", c.Domain)
		list, err := b.svcs.Slots.Calibrations(ctx, claim, 0)
		require.NoError(t, err)
		require.Len(t, list, 1)

		e, _ := fails(t, agent, "calibrate_claim", map[string]any{"claim_id": claim, "scores": []map[string]any{{"domain": "logic", "score": 90}}})
		require.Equal(t, slots.CodeCalibrationFailed, e.Code)
		require.Equal(t, "Scores must sum to 100", e.Message)
		e, _ = fails(t, agent, "calibrate_claim", map[string]any{"claim_id": claim, "scores": []map[string]any{}})
		require.Equal(t, "At least one domain is required", e.Message)
		e, _ = fails(t, agent, "calibrate_claim", map[string]any{"claim_id": "claim_missing", "scores": []map[string]any{{"domain": "logic", "score": 100}}})
		require.Equal(t, "claim_not_found", e.Code)
		_, msg := fails(t, agent, "calibrate_claim", map[string]any{"claim_id": claim})
		require.Contains(t, msg, "scores")
	})
}

// TestPrismTools takes a stage slot of a claim's pipeline and submits it
// through MCP on every backend.
func TestPrismTools(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		ctx := context.Background()
		b := setup(t, st)
		c, _, err := b.svcs.Prism.CreateClaim(ctx, prism.NewClaim{NewClaim: slots.NewClaim{Title: "Crows plan ahead", Body: "Scrub jays cache food."}})
		require.NoError(t, err)
		agent := b.connect(t, b.key(t, "worker", slots.ScopeCommentCreate))

		type work struct {
			Work *struct {
				Slot struct {
					ID    string `json:"_id"`
					Layer int    `json:"layer"`
					Phase string `json:"phase"`
				} `json:"slot"`
				Claim struct {
					ID string `json:"_id"`
				} `json:"claim"`
				Context struct {
					StageName   string `json:"stageName"`
					PriorLayers []any  `json:"priorLayers"`
				} `json:"context"`
			} `json:"work"`
			Layer *struct {
				Name string `json:"name"`
			} `json:"layer"`
		}
		e, _ := fails(t, agent, "take_work", map[string]any{"type": "vote"})
		require.Equal(t, "invalid_type", e.Code)
		w := ok[work](t, agent, "take_work", map[string]any{"layer": 1, "type": "work"})
		require.NotNil(t, w.Work)
		require.Equal(t, c.ID, w.Work.Claim.ID)
		require.Equal(t, 1, w.Work.Slot.Layer)
		require.Equal(t, "work", w.Work.Slot.Phase)
		require.NotEmpty(t, w.Work.Context.StageName)
		require.NotNil(t, w.Layer)

		// One slot per agent per layer: nothing more for this key now.
		none := ok[work](t, agent, "take_work", map[string]any{"layer": 1})
		require.Nil(t, none.Work)
		// Layer 0 is meta-v1's meta-classify, not any layer.
		none = ok[work](t, agent, "take_work", map[string]any{"layer": 0})
		require.Nil(t, none.Work, "no claim runs meta-v1")
		meta, _, err := b.svcs.Prism.CreateClaim(ctx, prism.NewClaim{NewClaim: slots.NewClaim{Title: "What if cities had no cars?"}, Protocol: prism.MetaV1ID})
		require.NoError(t, err)
		w0 := ok[work](t, agent, "take_work", map[string]any{"layer": 0})
		require.NotNil(t, w0.Work)
		require.Equal(t, meta.ID, w0.Work.Claim.ID)
		require.Equal(t, 0, w0.Work.Slot.Layer)

		e, _ = fails(t, agent, "submit_work", map[string]any{"claim_id": c.ID, "slot_id": w.Work.Slot.ID, "output": "x", "confidence": 7})
		require.Equal(t, "invalid_confidence", e.Code)
		_, msg := fails(t, agent, "submit_work", map[string]any{"claim_id": c.ID, "slot_id": w.Work.Slot.ID, "output": "x"})
		require.Contains(t, msg, "confidence")
		got := ok[mcp.SubmitOutput](t, agent, "submit_work", map[string]any{"claim_id": c.ID, "slot_id": w.Work.Slot.ID,
			"output": "Caching for tomorrow is planning.", "confidence": 0.85})
		require.True(t, got.OK)
		require.Equal(t, prism.StatusActive, got.Status)
		require.Equal(t, 1, got.Layer)
		require.Equal(t, c.ID, got.View.ClaimID)

		e, _ = fails(t, agent, "submit_work", map[string]any{"claim_id": c.ID, "slot_id": w.Work.Slot.ID, "output": "again", "confidence": 0.5})
		require.NotEmpty(t, e.Code)

		// A consensus record needs consensus:write, and is the claim's
		// latest once posted.
		record := map[string]any{"claim_id": c.ID, "summary": "They plan.", "key_points": []string{"caching"}, "confidence": 80.4}
		e, _ = fails(t, agent, "post_consensus", record)
		require.Equal(t, "missing_scope", e.Code)
		scribe := b.connect(t, b.key(t, "scribe", prism.ScopeConsensusWrite))
		e, _ = fails(t, scribe, "post_consensus", map[string]any{"claim_id": c.ID, "summary": "s", "key_points": []string{" "}, "confidence": 50})
		require.Equal(t, "consensus_create_failed", e.Code)
		e, _ = fails(t, scribe, "post_consensus", map[string]any{"claim_id": "claim_missing", "summary": "s", "key_points": []string{"k"}, "confidence": 50})
		require.Equal(t, "claim_not_found", e.Code)
		posted := ok[wire.Consensus](t, scribe, "post_consensus", record)
		require.Equal(t, c.ID, posted.ClaimID)
		require.Equal(t, []string{"caching"}, posted.KeyPoints)
		require.Equal(t, 80.0, posted.Confidence)
		require.Equal(t, "scribe", posted.AgentName)
		latest, err := b.svcs.Prism.Consensus(ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, posted.ID, latest.ID)
	})
}

// TestArenaTools plays a whole game with three MCP agents on every
// backend: join, watch game_state, argue and decide until it completes.
func TestArenaTools(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		ctx := context.Background()
		b := setup(t, st)
		g, err := b.svcs.Arena.Create(ctx, arena.TableMin, 0)
		require.NoError(t, err)
		var players []*sdk.ClientSession
		for _, name := range []string{"Ada", "Brook", "Cy"} {
			p := b.connect(t, b.key(t, name, arena.ScopePlay))
			games := ok[mcp.GamesOutput](t, p, "list_games", map[string]any{"status": "waiting_for_agents"})
			require.NotEmpty(t, games.Games)
			joined := ok[mcp.JoinOutput](t, p, "join_game", map[string]any{"game_id": g.ID, "display_name": name})
			require.NotEmpty(t, joined.AgentID)
			players = append(players, p)
		}
		outsider := b.connect(t, b.key(t, "outsider", arena.ScopePlay))
		e, _ := fails(t, outsider, "argue", map[string]any{"game_id": g.ID, "text": "me too"})
		require.Equal(t, "agent_not_found", e.Code)
		reader := b.connect(t, b.key(t, "reader"))
		e, _ = fails(t, reader, "join_game", map[string]any{"game_id": g.ID, "display_name": "r"})
		require.Equal(t, "missing_scope", e.Code)
		require.Contains(t, e.Message, "arena:play")

		_, err = b.svcs.Arena.Start(ctx, g.ID)
		require.NoError(t, err)

		argued, decided := 0, 0
		for step := 0; ; step++ {
			require.Less(t, step, 500, "the game did not complete")
			state := ok[mcp.GameStateOutput](t, players[step%len(players)], "game_state", map[string]any{"game_id": g.ID})
			if state.State.Status == string(arena.StatusCompleted) {
				break
			}
			if !state.CanAct {
				// A player that may not act is refused with the HTTP API's code.
				if step < 3 && state.Role != nil && *state.Role != string(arena.RoleOperator) {
					e, _ := fails(t, players[step%len(players)], "decide", map[string]any{"game_id": g.ID, "decision": "save_majority"})
					require.NotEmpty(t, e.Code)
				}
				continue
			}
			require.NotEmpty(t, state.RoundID)
			switch *state.AllowedAction {
			case string(arena.ActArgue):
				a := ok[mcp.ArgueOutput](t, players[step%len(players)], "argue", map[string]any{"game_id": g.ID, "text": "Save my track: we are many."})
				require.True(t, a.OK)
				argued++
			case string(arena.ActDecide):
				d := ok[mcp.DecideOutput](t, players[step%len(players)], "decide", map[string]any{"game_id": g.ID, "decision": "save_minority"})
				require.True(t, d.OK)
				decided++
			}
		}
		require.Positive(t, argued)
		require.GreaterOrEqual(t, decided, arena.TableMin, "every player was the operator once")
	})
}

// TestDiscussionTools asks the squad, answers to quorum, waits and chats
// through MCP on every backend.
func TestDiscussionTools(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		b := setup(t, st)
		asker := b.connect(t, b.key(t, "lead", discussion.ScopeWrite))
		answerers := []*sdk.ClientSession{
			b.connect(t, b.key(t, "scout", discussion.ScopeWrite)),
			b.connect(t, b.key(t, "smith", discussion.ScopeWrite)),
		}
		asked := ok[mcp.AskOutput](t, asker, "ask_squad", map[string]any{"message": "Ship on Friday?", "required_responses": 2, "timeout_minutes": 5})
		require.NotEmpty(t, asked.PromptID)
		require.Empty(t, ok[mcp.PromptsOutput](t, asker, "pending_prompts", nil).Prompts, "not one's own prompt")

		early := ok[mcp.WaitOutput](t, asker, "wait_for_answers", map[string]any{"prompt_id": asked.PromptID, "timeout_seconds": 0})
		require.False(t, early.Ready)

		for i, a := range answerers {
			pending := ok[mcp.PromptsOutput](t, a, "pending_prompts", nil)
			require.Len(t, pending.Prompts, 1)
			require.Equal(t, asked.PromptID, pending.Prompts[0].ID)
			ans := ok[mcp.AnswerOutput](t, a, "answer_prompt", map[string]any{"prompt_id": asked.PromptID, "message": "Yes."})
			require.Equal(t, i+1, ans.ResponseCount)
			require.Equal(t, 2, ans.RequiredResponses)
			require.Equal(t, i == 1, ans.Ready)
			require.Empty(t, ok[mcp.PromptsOutput](t, a, "pending_prompts", nil).Prompts)
		}
		e, _ := fails(t, answerers[0], "answer_prompt", map[string]any{"prompt_id": asked.PromptID, "message": "Again."})
		require.NotEmpty(t, e.Code)

		done := ok[mcp.WaitOutput](t, asker, "wait_for_answers", map[string]any{"prompt_id": asked.PromptID, "timeout_seconds": 5})
		require.True(t, done.Ready)
		require.Equal(t, "resolved", done.Status)
		require.Len(t, done.CollectedContext, 2)
		require.Equal(t, "scout", done.CollectedContext[0].Agent)

		e, _ = fails(t, asker, "wait_for_answers", map[string]any{"prompt_id": asked.PromptID, "timeout_seconds": 600})
		require.Equal(t, "invalid_timeout_seconds", e.Code)

		posted := ok[mcp.MessageOutput](t, answerers[1], "post_message", map[string]any{"message": "Tests are green.", "task_ref": "T-1"})
		require.Equal(t, "smith", posted.Message.AgentName)
		ok[mcp.MessageOutput](t, asker, "post_message", map[string]any{"message": "Thanks.", "reply_to_id": posted.MessageID})
		read := ok[mcp.MessagesOutput](t, asker, "read_messages", map[string]any{"limit": 10})
		var said []string
		for _, m := range read.Messages {
			said = append(said, m.Message)
		}
		require.Contains(t, said, "Tests are green.")
		require.Contains(t, said, "Thanks.")
		e, _ = fails(t, asker, "read_messages", map[string]any{"limit": -1})
		require.Equal(t, "invalid_limit", e.Code)
	})
}

// TestBadArgumentsAreToolErrors gives every tool, for each of its
// arguments, a value of the wrong type, and no arguments at all: each is
// a tool error (naming the argument where it has the wrong type), never a
// protocol failure or a panic.
func TestBadArgumentsAreToolErrors(t *testing.T) {
	t.Parallel()
	b := setup(t, testbackend.All()[0].New(t))
	cs := b.connect(t, b.key(t, "prober", b.svcs.Identity.Scopes()...))
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	for _, tool := range res.Tools {
		props, _ := tool.InputSchema.(map[string]any)["properties"].(map[string]any)
		for name, p := range props {
			if len(p.(map[string]any)) == 1 { // only a description: any JSON value (a structured output)
				continue
			}
			r := call(t, cs, tool.Name, map[string]any{name: map[string]any{"wrong": []any{1}}})
			require.True(t, r.IsError, "%s with a wrong %s: %s", tool.Name, name, text(r))
			require.Contains(t, text(r), name, tool.Name)
		}
		if required, _ := tool.InputSchema.(map[string]any)["required"].([]any); len(required) > 0 {
			r := call(t, cs, tool.Name, nil)
			require.True(t, r.IsError, "%s without arguments: %s", tool.Name, text(r))
		}
		r := call(t, cs, tool.Name, map[string]any{"surprise": 1})
		require.True(t, r.IsError, "%s with an unknown argument: %s", tool.Name, text(r))
		require.Contains(t, text(r), "surprise", tool.Name)
	}
}

// TestRateLimit: the writing tools count against the key's rate limit
// when the host passes one, and a key over it is told rate_limited.
func TestRateLimit(t *testing.T) {
	t.Parallel()
	b := setup(t, testbackend.All()[0].New(t))
	token := b.key(t, "hasty", slots.ScopeCommentCreate)
	cs := connectTo(t, mcp.NewServer(b.svcs, mcp.Options{Token: token, Limiter: httpapi.NewLocalLimiter(0.001, 1)}))
	ok[mcp.JobOutput](t, cs, "take_job", nil)
	e, _ := fails(t, cs, "take_job", nil)
	require.Equal(t, "rate_limited", e.Code)
	ok[mcp.ProfileOutput](t, cs, "my_profile", nil) // a read is not limited
}

// TestIdleSessionsAreReleased: a Streamable HTTP session idle for
// Options.SessionTimeout is closed, and what the server kept for it with
// it; its client must open a new one.
func TestIdleSessionsAreReleased(t *testing.T) {
	t.Parallel()
	b := setup(t, testbackend.All()[0].New(t))
	srv := httptest.NewServer(mcp.Handler(b.svcs, mcp.Options{SessionTimeout: 100 * time.Millisecond}))
	defer srv.Close()
	cs, err := mcp.Dial(context.Background(), srv.URL, b.key(t, "idler"), srv.Client())
	require.NoError(t, err)
	defer cs.Close()
	_, err = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "my_profile"})
	require.NoError(t, err)
	time.Sleep(400 * time.Millisecond)
	_, err = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "my_profile"})
	require.Error(t, err, "the idle session is gone")
}

// TestArgumentsKeepTheTextRule gives the tools a NUL in an argument, which
// PostgreSQL cannot keep, on every backend: each is the HTTP API's
// invalid_text naming the argument, as a request body holding one is,
// never an internal error on one backend and not found on another. A
// layer no protocol has is no work, not a number the store fails on.
func TestArgumentsKeepTheTextRule(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		b := setup(t, st)
		cs := b.connect(t, b.key(t, "prober", b.svcs.Identity.Scopes()...))
		for _, c := range []struct {
			tool, arg string
			args      map[string]any
		}{
			{"take_job", "domain", map[string]any{"domain": "a\x00b"}},
			{"post_comment", "claim_id", map[string]any{"claim_id": "a\x00b", "body": "x", "comment_type": "criticism"}},
			{"finish_job", "claim_id", map[string]any{"claim_id": "a\x00b", "slot_id": "s"}},
			{"take_work", "role", map[string]any{"role": "\x00"}},
			{"submit_work", "structured_output", map[string]any{"claim_id": "c", "slot_id": "s", "confidence": nil, "structured_output": map[string]any{"k": []any{"\x00"}}}},
			{"game_state", "game_id", map[string]any{"game_id": "a\x00b"}},
			{"join_game", "game_id", map[string]any{"game_id": "a\x00b", "display_name": "x"}},
			{"argue", "game_id", map[string]any{"game_id": "a\x00b", "text": "x"}},
			{"decide", "game_id", map[string]any{"game_id": "a\x00b", "decision": "save_majority"}},
			{"answer_prompt", "prompt_id", map[string]any{"prompt_id": "a\x00b", "message": "x"}},
			{"wait_for_answers", "prompt_id", map[string]any{"prompt_id": "a\x00b", "timeout_seconds": 0}},
		} {
			e, msg := fails(t, cs, c.tool, c.args)
			require.Equal(t, "invalid_text", e.Code, "%s: %s", c.tool, msg)
			require.Contains(t, e.Message, c.arg, c.tool)
		}
		none := ok[mcp.WorkOutput](t, cs, "take_work", map[string]any{"layer": 1e12})
		require.Nil(t, none.Work)
	})
}

// TestJoinGameOncePerKey joins a game twice with one key, one after the
// other and two at once, on every backend: the key gets one agent, the
// one its tools act for, and a second join is already_joined rather than a
// seat nobody can play.
func TestJoinGameOncePerKey(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		ctx := context.Background()
		b := setup(t, st)
		g, err := b.svcs.Arena.Create(ctx, arena.TableMin, 0)
		require.NoError(t, err)
		p := b.connect(t, b.key(t, "Ada", arena.ScopePlay))
		joined := ok[mcp.JoinOutput](t, p, "join_game", map[string]any{"game_id": g.ID, "display_name": "Ada"})
		e, _ := fails(t, p, "join_game", map[string]any{"game_id": g.ID, "display_name": "Ada again"})
		require.Equal(t, "already_joined", e.Code)

		racer := b.connect(t, b.key(t, "Brook", arena.ScopePlay))
		results := make([]*sdk.CallToolResult, 2)
		var wg sync.WaitGroup
		for i := range results {
			wg.Go(func() {
				results[i] = call(t, racer, "join_game", map[string]any{"game_id": g.ID, "display_name": "Brook"})
			})
		}
		wg.Wait()
		require.NotEqual(t, results[0].IsError, results[1].IsError, "one join of two at once: %s / %s", text(results[0]), text(results[1]))

		state, err := b.svcs.Arena.Game(ctx, g.ID)
		require.NoError(t, err)
		require.Len(t, state.Agents, 2)
		require.Equal(t, joined.AgentID, ok[mcp.GameStateOutput](t, p, "game_state", map[string]any{"game_id": g.ID}).AgentID)
	})
}
