package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/httpapi/client"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/internal/testbackend"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
	"github.com/agorahq/agora/store/storetest"
)

// newKeyedAPI serves /api/v1, the discussion and the arena routes with
// keys required (httpapi.WithKeys), the admin key being adminToken.
func newKeyedAPI(t *testing.T, st storetest.Stores, limit ...httpapi.LimiterOption) *apiClient {
	t.Helper()
	keys := slots.New(st.Slots)
	ids := identity.New(st.Identity, identity.WithAdminKey(adminToken), identity.WithScopes(httpapi.Scopes()))
	slotsOpts := []httpapi.SlotsOption{}
	discOpts := []httpapi.DiscussionOption{httpapi.WithKeys(ids)}
	arenaOpts := []httpapi.ArenaOption{httpapi.WithKeys(ids)}
	for _, o := range limit {
		slotsOpts, discOpts, arenaOpts = append(slotsOpts, o), append(discOpts, o), append(arenaOpts, o)
	}
	mux := http.NewServeMux()
	mux.Handle("/api/v1/", httpapi.Slots(keys, ids, slotsOpts...))
	disc := httpapi.Discussion(discussion.New(st.Discussion, discussion.WithNotifier(st.Notifier)), discOpts...)
	for _, p := range []string{"/api/discussion", "/api/discussion/", "/api/squad-chat", "/api/squad-chat/"} {
		mux.Handle(p, disc)
	}
	games := httpapi.Arena(arena.New(st.Arena, arena.WithNotifier(st.Notifier)), arenaOpts...)
	for _, p := range []string{"/api/games", "/api/games/", "/api/demo/", "/skill.md", "/health"} {
		mux.Handle(p, games)
	}
	srv := httptest.NewServer(validated(t, mux))
	t.Cleanup(srv.Close)
	return &apiClient{t: t, srv: srv}
}

// discussionRoutes are every discussion and squad-chat route, with a body
// each would accept.
var discussionRoutes = []struct {
	method, path string
	body         any
	write        bool
}{
	{"POST", "/api/discussion", map[string]any{"requester_agent": "Developer", "prompt_message": "Which index?"}, true},
	{"GET", "/api/discussion", nil, false},
	{"GET", "/api/discussion/prompt_x", nil, false},
	{"POST", "/api/discussion/prompt_x", map[string]any{"agent_name": "Builder", "message": "Use a B-tree."}, true},
	{"PATCH", "/api/discussion/prompt_x", map[string]any{"action": "cancel"}, true},
	{"GET", "/api/squad-chat", nil, false},
	{"POST", "/api/squad-chat", map[string]any{"agent_name": "Builder", "message": "Hello"}, true},
	{"GET", "/api/squad-chat/events", nil, false},
}

func TestDiscussionKeysRequired(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newKeyedAPI(t, st)
		_, other := c.key("Reviewer", slots.ScopeCommentCreate)
		for _, rt := range discussionRoutes {
			for _, token := range []string{"", "agora.nokey.nosecret", "not-a-token"} {
				r := c.expect(401, rt.method, rt.path, token, rt.body)
				require.Equal(t, tokenCode(token), r.errCode(t), "%s %s", rt.method, rt.path)
			}
			if rt.method == "POST" {
				// A key without discussion:write asks, answers and posts nothing.
				r := c.expect(403, rt.method, rt.path, other, rt.body)
				require.Equal(t, "missing_scope", r.errCode(t), "%s %s", rt.method, rt.path)
			}
		}
		// Reads need any valid key.
		require.Empty(t, c.expect(200, "GET", "/api/discussion", other, nil).body["prompts"])
		require.Empty(t, c.expect(200, "GET", "/api/squad-chat", other, nil).body["messages"])
		c.expect(404, "GET", "/api/discussion/prompt_x", other, nil)
		// A revoked key is refused like none.
		id, dev := c.key("Developer", discussion.ScopeWrite)
		c.expect(201, "POST", "/api/discussion", dev, map[string]any{"prompt_message": "Which index?"})
		c.expect(204, "DELETE", "/api/v1/keys/"+id, adminToken, nil)
		c.expect(401, "POST", "/api/discussion", dev, map[string]any{"prompt_message": "Which index?"})
		c.expect(401, "GET", "/api/discussion", dev, nil)
	})
}

func TestDiscussionKeysAreIdentities(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newKeyedAPI(t, st)
		ctx := context.Background()
		_, devToken := c.key("Developer", discussion.ScopeWrite)
		_, builderToken := c.key("Builder", discussion.ScopeWrite)
		_, growthToken := c.key("Growth", discussion.ScopeWrite)
		_, opToken := c.key("Operator", discussion.ScopeWrite, discussion.ScopeAdmin)
		base := client.New(c.srv.URL, client.WithHTTPClient(c.srv.Client()))
		dev, builder, growth, op := base.As(devToken), base.As(builderToken), base.As(growthToken), base.As(opToken)

		// A prompt to quorum through the Go client, everyone named by its key.
		_, _, err := dev.Ask(ctx, discussion.NewPrompt{RequesterAgent: "Builder", PromptMessage: "Which index?"})
		require.ErrorIs(t, err, store.ErrForbidden, "asking under another key's name")
		p, err := dev.AskSquad(ctx, client.Question{PromptMessage: "Which index?", RequiredResponses: 2})
		require.NoError(t, err)
		require.Equal(t, "Developer", p.RequesterAgent, "a blank name is the key's")
		devKey, err := dev.Me(ctx)
		require.NoError(t, err)
		require.Equal(t, devKey.ID, p.RequesterKey)

		open, err := builder.OpenPrompts(ctx, "Builder")
		require.NoError(t, err)
		require.Len(t, open, 1)
		require.ErrorIs(t, builder.Respond(ctx, p.ID, discussion.Response{AgentName: "Growth", Message: "B-tree."}), store.ErrForbidden, "answering as another key")
		require.ErrorIs(t, builder.Respond(ctx, p.ID, discussion.Response{AgentName: "Builder", Message: "B-tree.", IsHuman: true}), store.ErrForbidden, "answering as a human needs discussion:admin")
		require.ErrorIs(t, dev.Respond(ctx, p.ID, discussion.Response{Message: "Myself."}), store.ErrInvalid, "the requester's key answers not its own prompt")
		require.NoError(t, builder.Respond(ctx, p.ID, discussion.Response{Message: "A B-tree."}))
		require.ErrorIs(t, builder.Respond(ctx, p.ID, discussion.Response{Message: "Again."}), store.ErrConflict)
		a, err := growth.Answer(ctx, p.ID, discussion.Response{AgentName: "Growth", Message: "A hash index."})
		require.NoError(t, err)
		require.True(t, a.Ready)
		require.Equal(t, devKey.ID, a.Prompt.RequesterKey)
		done, err := dev.WaitForDiscussion(ctx, p.ID)
		require.NoError(t, err)
		require.Equal(t, discussion.StatusResolved, done.Status)
		require.Len(t, done.CollectedContext, 2)
		require.Equal(t, "Builder", done.CollectedContext[0].Agent)
		require.Equal(t, "Growth", done.CollectedContext[1].Agent)

		// Only the asking key or a discussion:admin one closes a prompt.
		for _, action := range []discussion.Action{discussion.ActionResolve, discussion.ActionCancel} {
			q, err := dev.AskSquad(ctx, client.Question{PromptMessage: "Which cache?"})
			require.NoError(t, err)
			_, err = builder.ClosePrompt(ctx, q.ID, action)
			require.ErrorIs(t, err, store.ErrForbidden, "another key's prompt")
			v, err := dev.Prompt(ctx, q.ID, 0)
			require.NoError(t, err)
			require.Equal(t, discussion.StatusCollecting, v.Prompt.Status, "a refused close changes nothing")
			closed, err := dev.ClosePrompt(ctx, q.ID, action)
			require.NoError(t, err)
			require.True(t, closed.Final())

			q, err = dev.AskSquad(ctx, client.Question{PromptMessage: "Which queue?"})
			require.NoError(t, err)
			closed, err = op.ClosePrompt(ctx, q.ID, action)
			require.NoError(t, err, "discussion:admin closes any prompt")
			require.True(t, closed.Final())
		}
		// Rights before the body: a key that may not close the prompt
		// learns nothing from a bad action.
		q, err := dev.AskSquad(ctx, client.Question{PromptMessage: "Which editor?"})
		require.NoError(t, err)
		r := c.expect(403, "PATCH", "/api/discussion/"+q.ID, builderToken, map[string]any{"action": "explode"})
		require.Equal(t, "not_requester", r.errCode(t))
		c.expect(400, "PATCH", "/api/discussion/"+q.ID, devToken, map[string]any{"action": "explode"})

		q, err = builder.AskSquad(ctx, client.Question{PromptMessage: "Which language?"})
		require.NoError(t, err)
		_, err = base.As(adminToken).ClosePrompt(ctx, q.ID, discussion.ActionCancel)
		require.NoError(t, err, "the admin key holds discussion:admin")

		// The squad chat: an agent posts as its key; a human needs discussion:admin.
		m, err := builder.PostMessage(ctx, client.NewMessage{Message: "Shipping the index."})
		require.NoError(t, err)
		require.Equal(t, "Builder", m.AgentName)
		_, err = builder.PostMessage(ctx, client.NewMessage{AgentName: "Operator", Message: "Stop everything."})
		require.ErrorIs(t, err, store.ErrForbidden)
		_, err = builder.PostMessage(ctx, client.NewMessage{AgentName: "Builder", Message: "Stop everything.", IsHuman: true})
		require.ErrorIs(t, err, store.ErrForbidden)
		h, err := op.PostMessage(ctx, client.NewMessage{AgentName: "Operator", Message: "Ship it.", IsHuman: true, ReplyToID: m.ID})
		require.NoError(t, err)
		require.True(t, h.IsHuman)
		require.Equal(t, "Operator", h.AgentName)
		ms, err := growth.Messages(ctx, client.MessagesQuery{Limit: 2})
		require.NoError(t, err)
		require.Equal(t, []string{h.ID, m.ID}, []string{ms[0].ID, ms[1].ID})
	})
}

func TestKeysRateLimitWrites(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		// Two writes per key, and (at this rate) none refilled during the test.
		c := newKeyedAPI(t, st, httpapi.WithLimiter(httpapi.NewLocalLimiter(1e-6, 2)))
		_, a := c.key("Builder", discussion.ScopeWrite, arena.ScopePlay)
		_, b := c.key("Growth", discussion.ScopeWrite)
		msg := map[string]any{"message": "Hello"}
		c.expect(201, "POST", "/api/squad-chat", a, msg)
		c.expect(201, "POST", "/api/discussion", a, map[string]any{"prompt_message": "Which index?"})
		r := c.expect(429, "POST", "/api/squad-chat", a, msg)
		require.NotEmpty(t, r.header.Get("Retry-After"))
		c.expect(429, "POST", "/api/discussion", a, map[string]any{"prompt_message": "Which index?"})
		// The arena's writes draw on the same budget of the key.
		game := c.expect(200, "POST", "/api/games", adminToken, map[string]any{}).body["game_id"].(string)
		c.expect(429, "POST", "/api/games/"+game+"/agents/register", a, map[string]any{"display_name": "Builder"})
		c.expect(200, "GET", "/api/games/"+game, a, nil)
		c.expect(200, "GET", "/api/squad-chat", a, nil)  // reads are not limited
		c.expect(201, "POST", "/api/squad-chat", b, msg) // another key has its own budget
	})
}

func TestDiscussionWithoutKeysStaysOpen(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newDiscussionAPI(t, st, false)
		// Any name, any close, human posts: the original API's open routes, a
		// stray Authorization header ignored.
		p := c.expect(201, "POST", "/api/discussion", "whatever", map[string]any{"requester_agent": "Developer", "prompt_message": "Which index?"}).body["prompt"].(map[string]any)
		require.NotContains(t, p, "requester_key")
		id := p["id"].(string)
		c.expect(201, "POST", "/api/discussion/"+id, "", map[string]any{"agent_name": "Builder", "message": "B-tree.", "is_human": true})
		c.expect(200, "PATCH", "/api/discussion/"+id, "", map[string]any{"action": "cancel"})
		c.expect(201, "POST", "/api/squad-chat", "", map[string]any{"agent_name": "Operator", "message": "Hi", "is_human": true})
		c.expect(400, "POST", "/api/discussion", "", map[string]any{"prompt_message": "Nameless?"})
	})
}

// arenaRoutes are every arena route but the instructions and the health
// check, with a body each would accept and the scope it needs ("" for any
// key).
var arenaRoutes = []struct {
	method, path string
	body         any
	scope        identity.Scope
}{
	{"POST", "/api/games", map[string]any{}, arena.ScopeAdmin},
	{"GET", "/api/games", nil, ""},
	{"GET", "/api/games/game_x", nil, ""},
	{"POST", "/api/games/game_x/agents/register", map[string]any{"display_name": "Alice"}, arena.ScopePlay},
	{"POST", "/api/games/game_x/start", nil, arena.ScopeAdmin},
	{"GET", "/api/games/game_x/state", nil, ""},
	{"GET", "/api/games/game_x/feed", nil, ""},
	{"GET", "/api/games/game_x/scoreboard", nil, ""},
	{"GET", "/api/games/game_x/history", nil, ""},
	{"POST", "/api/games/game_x/rounds/round_x/arguments", map[string]any{"agent_id": "agent_x", "text": "pull it"}, arena.ScopePlay},
	{"POST", "/api/games/game_x/rounds/round_x/decision", map[string]any{"agent_id": "agent_x", "decision": "save_majority"}, arena.ScopePlay},
	{"POST", "/api/games/game_x/advance", map[string]any{"action": "next_phase"}, arena.ScopeAdmin},
	{"GET", "/api/games/game_x/open-actions?agent_id=agent_x", nil, ""},
	{"GET", "/api/games/game_x/events", nil, ""},
	{"POST", "/api/games/game_x/add-filler", map[string]any{"count": 1}, arena.ScopeAdmin},
	{"POST", "/api/games/game_x/tick-filler", nil, arena.ScopeAdmin},
	{"POST", "/api/demo/create", nil, arena.ScopeAdmin},
}

func TestArenaKeysRequired(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newKeyedAPI(t, st)
		_, none := c.key("Reviewer", slots.ScopeCommentCreate)
		_, player := c.key("Player", arena.ScopePlay)
		_, host := c.key("Host", arena.ScopeAdmin)
		for _, rt := range arenaRoutes {
			for _, token := range []string{"", "agora.nokey.nosecret"} {
				r := c.expect(401, rt.method, rt.path, token, rt.body)
				require.Equal(t, tokenCode(token), r.errCode(t), "%s %s", rt.method, rt.path)
			}
			if rt.scope == "" {
				continue
			}
			// A key without the route's scope is refused before the route
			// looks for the game.
			for _, token := range []string{none, player, host} {
				if (token == player && rt.scope == arena.ScopePlay) || (token == host && rt.scope == arena.ScopeAdmin) {
					continue
				}
				r := c.expect(403, rt.method, rt.path, token, rt.body)
				require.Equal(t, "missing_scope", r.errCode(t), "%s %s", rt.method, rt.path)
			}
			// With it, the route runs: no such game, or a new one.
			r := c.do(rt.method, rt.path, map[identity.Scope]string{arena.ScopePlay: player, arena.ScopeAdmin: host}[rt.scope], rt.body)
			require.Contains(t, []int{200, 201, 404}, r.status, "%s %s: %s", rt.method, rt.path, r.raw)
		}
		// Reads need any valid key; the instructions and health stay open.
		require.Contains(t, c.expect(200, "GET", "/api/games", none, nil).raw, `"status":"waiting_for_agents"`, "the game the host made")
		c.expect(404, "GET", "/api/games/game_x/state", none, nil)
		c.expect(200, "GET", "/health", "", nil)
		res, err := c.srv.Client().Get(c.srv.URL + "/skill.md")
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, 200, res.StatusCode)
	})
}

func TestArenaKeysAreAgents(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newKeyedAPI(t, st)
		ctx := context.Background()
		base := client.New(c.srv.URL, client.WithHTTPClient(c.srv.Client()))
		admin := base.As(adminToken)
		players := map[string]*client.Client{} // agent ID -> the client of the key that registered it
		game, err := admin.CreateGame(ctx, client.NewGame{MinPlayers: 3})
		require.NoError(t, err)
		var agents []string
		for _, n := range []string{"Alice", "Bob", "Charlie"} {
			_, token := c.key(n, arena.ScopePlay)
			p := base.As(token)
			_, err := p.Register(ctx, game, client.NewAgent{DisplayName: n, Token: "agent-secret"})
			require.ErrorIs(t, err, store.ErrInvalid, "the key is the agent's credential: no token besides")
			id, err := p.Register(ctx, game, client.NewAgent{DisplayName: n})
			require.NoError(t, err)
			players[id] = p
			agents = append(agents, id)
		}
		require.ErrorIs(t, players[agents[0]].StartGame(ctx, game), store.ErrForbidden, "starting needs arena:admin")
		require.NoError(t, admin.StartGame(ctx, game))

		// A whole game, each agent played by its own key; every other key
		// is refused for it, whatever agent_id it sends.
		version := int64(-1)
		refused := 0
		for steps := 0; ; steps++ {
			require.Less(t, steps, 100, "the game did not complete")
			s, err := players[agents[0]].WaitState(ctx, game, version, 5*time.Second)
			require.NoError(t, err)
			version = s.Version
			if s.Status == string(arena.StatusCompleted) {
				break
			}
			for i, id := range agents {
				oa, err := players[id].OpenActions(ctx, game, id)
				require.NoError(t, err)
				if !oa.CanAct {
					continue
				}
				turn := client.Turn{GameID: game, RoundID: oa.RoundID, AgentID: id}
				other := players[agents[(i+1)%len(agents)]]
				if *oa.AllowedAction == "decision" {
					require.ErrorIs(t, other.Decide(ctx, turn, arena.SaveMajority), store.ErrForbidden)
					require.ErrorIs(t, admin.Decide(ctx, turn, arena.SaveMajority), store.ErrForbidden, "not even the admin key decides for an agent")
					require.NoError(t, players[id].Decide(ctx, turn, arena.SaveMajority))
				} else {
					require.ErrorIs(t, other.Argue(ctx, turn, "as someone else"), store.ErrForbidden)
					require.NoError(t, players[id].Argue(ctx, turn, "pull it"))
				}
				refused++
			}
		}
		require.Positive(t, refused)
		history, err := admin.History(ctx, game)
		require.NoError(t, err)
		require.NotEmpty(t, history)
		for _, r := range history {
			require.False(t, r.Forced)
			for _, a := range r.Arguments {
				require.Equal(t, "pull it", a.Text, "no refused argument was kept")
			}
		}

		// Admin actions need arena:admin; the demo's agents are its maker's key.
		g2, err := admin.CreateGame(ctx, client.NewGame{})
		require.NoError(t, err)
		_, err = players[agents[0]].AddFillers(ctx, g2, 2)
		require.ErrorIs(t, err, store.ErrForbidden)
		_, err = players[agents[0]].TickFillers(ctx, g2, true)
		require.ErrorIs(t, err, store.ErrForbidden)
		_, err = players[agents[0]].Advance(ctx, g2, arena.ActionNextPhase)
		require.ErrorIs(t, err, store.ErrForbidden)
		_, err = players[agents[0]].CreateGame(ctx, client.NewGame{})
		require.ErrorIs(t, err, store.ErrForbidden)
		_, _, err = players[agents[0]].CreateDemo(ctx)
		require.ErrorIs(t, err, store.ErrForbidden)
		_, hostToken := c.key("Host", arena.ScopeAdmin, arena.ScopePlay)
		host := base.As(hostToken)
		demo, demoAgents, err := host.CreateDemo(ctx)
		require.NoError(t, err)
		require.NoError(t, host.StartGame(ctx, demo))
		s, err := host.WaitState(ctx, demo, -1, 0)
		require.NoError(t, err)
		arguer := s.MajorityAgents[0].ID
		oa, err := host.OpenActions(ctx, demo, arguer)
		require.NoError(t, err)
		turn := client.Turn{GameID: demo, RoundID: oa.RoundID, AgentID: arguer}
		require.ErrorIs(t, players[agents[0]].Argue(ctx, turn, "not mine"), store.ErrForbidden)
		require.NoError(t, host.Argue(ctx, turn, "the demo's agents are mine"))
		require.Len(t, demoAgents, 3)
	})
}

func TestArenaWithoutKeysStaysOpen(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		games := arena.New(st.Arena, arena.WithNotifier(st.Notifier))
		srv := httptest.NewServer(validated(t, httpapi.Arena(games)))
		t.Cleanup(srv.Close)
		c := &apiClient{t: t, srv: srv}
		// Anyone creates, registers, starts and acts; a stray
		// Authorization header is the original API's agent token, not a key.
		game := c.expect(200, "POST", "/api/games", "", map[string]any{"min_players": 3}).body["game_id"].(string)
		var ids []string
		for i, n := range []string{"Alice", "Bob", "Charlie"} {
			body := map[string]any{"display_name": n}
			if i == 0 {
				body["token"] = "alice-secret"
			}
			ids = append(ids, c.expect(200, "POST", "/api/games/"+game+"/agents/register", "whatever", body).body["agent_id"].(string))
		}
		c.expect(200, "POST", "/api/games/"+game+"/start", "", nil)
		g, err := games.Game(context.Background(), game)
		require.NoError(t, err)
		r := g.Current()
		for _, id := range append(append([]string{}, r.Majority...), r.Minority...) {
			token := ""
			if id == ids[0] {
				c.expect(403, "POST", "/api/games/"+game+"/rounds/"+r.ID+"/arguments", "wrong", map[string]any{"agent_id": id, "text": "x"})
				token = "alice-secret"
			}
			c.expect(200, "POST", "/api/games/"+game+"/rounds/"+r.ID+"/arguments", token, map[string]any{"agent_id": id, "text": "pull it"})
		}
		c.expect(200, "POST", "/api/games/"+game+"/advance", "", map[string]any{"action": "force_decision"})
		c.expect(200, "POST", "/api/demo/create", "", nil)
	})
}
