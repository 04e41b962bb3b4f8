package client_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/httpapi/client"
	"github.com/agorahq/agora/internal/testbackend"
	"github.com/agorahq/agora/store"
	"github.com/agorahq/agora/store/storetest"
)

// TestDiscussionThroughTheClient: a requester waits on its prompt while
// two agents find it among their open prompts and answer; the wait
// returns with both answers.
func TestDiscussionThroughTheClient(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		ctx := t.Context()
		c := setup(t, st).As("")
		p, err := c.AskSquad(ctx, client.Question{RequesterAgent: "Developer", PromptMessage: "What should I consider?", RequiredResponses: 2, TimeoutMinutes: 5})
		require.NoError(t, err)
		require.Equal(t, discussion.StatusCollecting, p.Status)
		type result struct {
			p   discussion.Prompt
			err error
		}
		done := make(chan result, 1)
		go func() {
			got, err := c.WaitForDiscussion(ctx, p.ID)
			done <- result{got, err}
		}()
		for _, agent := range []string{"Builder", "Growth"} {
			open, err := c.OpenPrompts(ctx, agent)
			require.NoError(t, err)
			require.Len(t, open, 1)
			require.NoError(t, c.Respond(ctx, open[0].ID, discussion.Response{AgentName: agent, Message: "consider " + agent}))
		}
		select {
		case r := <-done:
			require.NoError(t, r.err)
			require.Equal(t, discussion.StatusResolved, r.p.Status)
			require.Len(t, r.p.CollectedContext, 2)
			require.Equal(t, "consider Builder", r.p.CollectedContext[0].Message)
		case <-time.After(30 * time.Second):
			t.Fatal("WaitForDiscussion did not return")
		}
	})
}

// ids returns the prompts' IDs.
func ids(ps []discussion.Prompt) []string {
	out := []string{}
	for _, p := range ps {
		out = append(out, p.ID)
	}
	return out
}

// TestPromptsListAndClose: the list filters by status, answering agent,
// task and limit; PATCH resolves or cancels an open prompt once, and a
// second close is a conflict.
func TestPromptsListAndClose(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		ctx := t.Context()
		c := setup(t, st).As("")
		ask := func(requester, task string) discussion.Prompt {
			t.Helper()
			in := discussion.NewPrompt{RequesterAgent: requester, PromptMessage: "Thoughts on " + task + "?"}
			if task != "" {
				in.TaskID = &task
			}
			p, m, err := c.Ask(ctx, in)
			require.NoError(t, err)
			require.Equal(t, discussion.TypeDiscussionPrompt, m.MessageType)
			require.Equal(t, &p.ID, m.DiscussionPromptID)
			return p
		}
		a := ask("Developer", "task-cache")
		b := ask("Builder", "task-login")
		cc := ask("Developer", "")
		require.Equal(t, "task-cache", *a.TaskID)

		list, err := c.Prompts(ctx, discussion.ListQuery{})
		require.NoError(t, err)
		require.Equal(t, []string{cc.ID, b.ID, a.ID}, ids(list), "open prompts, newest first")
		list, err = c.Prompts(ctx, discussion.ListQuery{TaskID: "task-cache"})
		require.NoError(t, err)
		require.Equal(t, []string{a.ID}, ids(list))
		list, err = c.Prompts(ctx, discussion.ListQuery{Agent: "Developer"})
		require.NoError(t, err)
		require.Equal(t, []string{b.ID}, ids(list), "not its own prompts")
		require.NoError(t, c.Respond(ctx, b.ID, discussion.Response{AgentName: "Developer", Message: "use a queue"}))
		list, err = c.Prompts(ctx, discussion.ListQuery{Agent: "Developer"})
		require.NoError(t, err)
		require.Empty(t, list, "nor one it answered")
		list, err = c.Prompts(ctx, discussion.ListQuery{Limit: 1})
		require.NoError(t, err)
		require.Equal(t, []string{cc.ID}, ids(list))

		v, err := c.Prompt(ctx, b.ID, 0)
		require.NoError(t, err)
		require.False(t, v.Ready)
		require.Len(t, v.Responses, 1)
		require.Equal(t, "Developer", v.Responses[0].AgentName)
		require.Equal(t, discussion.TypeDiscussionResponse, v.Responses[0].MessageType)

		resolved, err := c.ClosePrompt(ctx, a.ID, discussion.ActionResolve)
		require.NoError(t, err)
		require.Equal(t, discussion.StatusResolved, resolved.Status)
		require.NotNil(t, resolved.ResolvedAt)
		_, err = c.ClosePrompt(ctx, a.ID, discussion.ActionCancel)
		require.ErrorIs(t, err, store.ErrConflict, "a resolved prompt stays resolved")
		var e *client.Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, discussion.ErrPromptClosed.Code, e.Code)
		cancelled, err := c.ClosePrompt(ctx, cc.ID, discussion.ActionCancel)
		require.NoError(t, err)
		require.Equal(t, discussion.StatusCancelled, cancelled.Status)
		_, err = c.ClosePrompt(ctx, cc.ID, discussion.ActionResolve)
		require.ErrorIs(t, err, store.ErrConflict)
		_, err = c.ClosePrompt(ctx, b.ID, "shelve")
		require.ErrorIs(t, err, store.ErrInvalid)
		_, err = c.ClosePrompt(ctx, "prompt_missing", discussion.ActionCancel)
		require.ErrorIs(t, err, store.ErrNotFound)
		err = c.Respond(ctx, a.ID, discussion.Response{AgentName: "Growth", Message: "late"})
		require.ErrorIs(t, err, store.ErrConflict)

		v, err = c.Prompt(ctx, a.ID, 0)
		require.NoError(t, err)
		require.True(t, v.Ready, "a resolved prompt is ready")
		list, err = c.Prompts(ctx, discussion.ListQuery{Statuses: []discussion.Status{discussion.StatusResolved, discussion.StatusCancelled}})
		require.NoError(t, err)
		require.Equal(t, []string{cc.ID, a.ID}, ids(list))
		list, err = c.Prompts(ctx, discussion.ListQuery{Statuses: []discussion.Status{discussion.StatusCollecting}})
		require.NoError(t, err)
		require.Equal(t, []string{b.ID}, ids(list))
		_, err = c.Prompts(ctx, discussion.ListQuery{Statuses: []discussion.Status{"stale"}})
		require.ErrorIs(t, err, store.ErrInvalid)
		_, err = c.Prompts(ctx, discussion.ListQuery{Limit: discussion.MaxListLimit + 1})
		require.ErrorIs(t, err, store.ErrInvalid)
	})
}

// TestHumanResponse: a prompt asked with zero numbers takes the server's
// defaults and keeps its task; an answer sent with IsHuman is kept as a
// person's, in the prompt's collected context and among its responses,
// and an agent's answer is not.
func TestHumanResponse(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		ctx := t.Context()
		c := setup(t, st).As("")
		p, err := c.AskSquad(ctx, client.Question{TaskID: "task-release", RequesterAgent: "Developer", PromptMessage: "Ship on Friday?"})
		require.NoError(t, err)
		require.Equal(t, "task-release", *p.TaskID)
		require.Equal(t, discussion.DefaultRequired, p.RequiredResponses)
		require.Equal(t, discussion.DefaultTimeoutMinutes, p.TimeoutMinutes)

		require.NoError(t, c.Respond(ctx, p.ID, discussion.Response{AgentName: "Rosa", Message: "not on a Friday", IsHuman: true}))
		require.NoError(t, c.Respond(ctx, p.ID, discussion.Response{AgentName: "Builder", Message: "agreed"}))
		v, err := c.Prompt(ctx, p.ID, 0)
		require.NoError(t, err)
		require.True(t, v.Ready)
		got := map[string]bool{}
		for _, e := range v.Prompt.CollectedContext {
			got[e.Agent] = e.IsHuman
		}
		require.Equal(t, map[string]bool{"Rosa": true, "Builder": false}, got, "the collected context")
		got = map[string]bool{}
		for _, m := range v.Responses {
			got[m.AgentName] = m.IsHuman
		}
		require.Equal(t, map[string]bool{"Rosa": true, "Builder": false}, got, "the responses")
	})
}

// TestSquadChat: messages posted through the client are read back newest
// first with the prompts and responses of discussions, paged with before;
// SquadEvents tells a reader of each change.
func TestSquadChat(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		ctx := t.Context()
		c := setup(t, st).As("")
		events, err := c.SquadEvents(ctx)
		require.NoError(t, err)
		expectEvent(t, events, "", "the opening event")

		hello, err := c.PostMessage(ctx, client.NewMessage{AgentName: "Builder", Message: "hello squad"})
		require.NoError(t, err)
		require.Equal(t, discussion.TypeMessage, hello.MessageType)
		require.Nil(t, hello.DiscussionPromptID)
		expectEvent(t, events, "chat", "the message")
		human, err := c.PostMessage(ctx, client.NewMessage{AgentName: "Rosa", Message: "hi team", IsHuman: true})
		require.NoError(t, err)
		require.True(t, human.IsHuman)
		p, err := c.AskSquad(ctx, client.Question{RequesterAgent: "Developer", PromptMessage: "Ship on Friday?", RequiredResponses: 1})
		require.NoError(t, err)
		expectEvent(t, events, p.ID, "the prompt")
		require.NoError(t, c.Respond(ctx, p.ID, discussion.Response{AgentName: "Growth", Message: "not on a Friday"}))
		expectEvent(t, events, p.ID, "the response")

		msgs, err := c.Messages(ctx, client.MessagesQuery{})
		require.NoError(t, err)
		require.Len(t, msgs, 4)
		require.Equal(t, discussion.TypeDiscussionResponse, msgs[0].MessageType)
		require.Equal(t, &p.ID, msgs[0].DiscussionPromptID)
		require.Equal(t, discussion.TypeDiscussionPrompt, msgs[1].MessageType)
		require.Equal(t, human, msgs[2])
		require.Equal(t, hello, msgs[3])
		page, err := c.Messages(ctx, client.MessagesQuery{Limit: 2, Before: msgs[1].ID})
		require.NoError(t, err)
		require.Equal(t, msgs[2:], page)

		_, err = c.Messages(ctx, client.MessagesQuery{Limit: -1})
		require.ErrorIs(t, err, store.ErrInvalid)
		_, err = c.PostMessage(ctx, client.NewMessage{Message: "who am I"})
		require.ErrorIs(t, err, store.ErrInvalid)
	})
}

// TestSquadThreadsThroughTheClient: Answer returns mission-control's
// respond answer, and a message names its task and the message it replies
// to.
func TestSquadThreadsThroughTheClient(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		ctx := t.Context()
		c := setup(t, st).As("")
		p, err := c.AskSquad(ctx, client.Question{TaskID: "task-3", RequesterAgent: "Developer", PromptMessage: "Ship on Friday?", RequiredResponses: 1})
		require.NoError(t, err)
		a, err := c.Answer(ctx, p.ID, discussion.Response{AgentName: "Growth", Message: "not on a Friday"})
		require.NoError(t, err)
		require.True(t, a.Ready)
		require.Equal(t, "resolved", a.Prompt.Status)
		require.Equal(t, "not on a Friday", a.Response.Message)
		require.Equal(t, "discussion_response", a.Response.MessageType)
		require.Equal(t, &p.ID, a.Response.DiscussionPromptID)
		require.Equal(t, a.Response, a.Chat)
		require.Equal(t, 1, a.ResponseCount)

		msgs, err := c.Messages(ctx, client.MessagesQuery{Limit: 2})
		require.NoError(t, err)
		promptMsg := msgs[1]
		require.Equal(t, discussion.TypeDiscussionPrompt, promptMsg.MessageType)
		require.Equal(t, "task-3", *promptMsg.TaskRef)
		reply, err := c.PostMessage(ctx, client.NewMessage{AgentName: "Rosa", Message: "agreed", IsHuman: true, TaskRef: "task-3", ReplyToID: promptMsg.ID})
		require.NoError(t, err)
		require.Equal(t, &promptMsg.ID, reply.ReplyToID)
		require.Equal(t, "task-3", *reply.TaskRef)
		plain, err := c.PostMessage(ctx, client.NewMessage{AgentName: "Rosa", Message: "and lunch?"})
		require.NoError(t, err)
		require.Nil(t, plain.ReplyToID)
		require.Nil(t, plain.TaskRef)
		_, err = c.PostMessage(ctx, client.NewMessage{AgentName: "Rosa", Message: "?", ReplyToID: "msg_missing"})
		require.ErrorIs(t, err, store.ErrInvalid)
	})
}
