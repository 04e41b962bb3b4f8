package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/httpapi/client"
	"github.com/agorahq/agora/internal/testbackend"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
	"github.com/agorahq/agora/store/storetest"
)

// newKeyedAPI serves /api/v1 and the discussion routes with keys required
// (httpapi.WithKeys), the admin key being adminToken.
func newKeyedAPI(t *testing.T, st storetest.Stores, opts ...httpapi.Option) *apiClient {
	t.Helper()
	keys := slots.New(st.Slots, slots.WithAdminKey(adminToken))
	opts = append([]httpapi.Option{httpapi.WithKeys(keys)}, opts...)
	mux := http.NewServeMux()
	mux.Handle("/api/v1/", httpapi.AOP(keys, opts...))
	disc := httpapi.Discussion(discussion.New(st.Discussion, discussion.WithNotifier(st.Notifier)), opts...)
	for _, p := range []string{"/api/discussion", "/api/discussion/", "/api/squad-chat", "/api/squad-chat/"} {
		mux.Handle(p, disc)
	}
	srv := httptest.NewServer(mux)
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
				require.Equal(t, "invalid_api_key", r.errCode(t), "%s %s", rt.method, rt.path)
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
		id, dev := c.key("Developer", slots.ScopeDiscussionWrite)
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
		_, devToken := c.key("Developer", slots.ScopeDiscussionWrite)
		_, builderToken := c.key("Builder", slots.ScopeDiscussionWrite)
		_, growthToken := c.key("Growth", slots.ScopeDiscussionWrite)
		_, opToken := c.key("Operator", slots.ScopeDiscussionWrite, slots.ScopeDiscussionAdmin)
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
		q, err := builder.AskSquad(ctx, client.Question{PromptMessage: "Which language?"})
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

func TestDiscussionKeysRateLimitWrites(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		// Two writes per key, and (at this rate) none refilled during the test.
		c := newKeyedAPI(t, st, httpapi.WithLimiter(httpapi.NewLocalLimiter(1e-6, 2)))
		_, a := c.key("Builder", slots.ScopeDiscussionWrite)
		_, b := c.key("Growth", slots.ScopeDiscussionWrite)
		msg := map[string]any{"message": "Hello"}
		c.expect(201, "POST", "/api/squad-chat", a, msg)
		c.expect(201, "POST", "/api/discussion", a, map[string]any{"prompt_message": "Which index?"})
		r := c.expect(429, "POST", "/api/squad-chat", a, msg)
		require.NotEmpty(t, r.header.Get("Retry-After"))
		c.expect(429, "POST", "/api/discussion", a, map[string]any{"prompt_message": "Which index?"})
		c.expect(200, "GET", "/api/squad-chat", a, nil)  // reads are not limited
		c.expect(201, "POST", "/api/squad-chat", b, msg) // another key has its own budget
	})
}

func TestDiscussionWithoutKeysStaysOpen(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newDiscussionAPI(t, st, false)
		// Any name, any close, human posts: the seed's open routes, a
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
