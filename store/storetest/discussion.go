package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/store"
)

type discussionEnv struct {
	ctx   context.Context
	svc   *discussion.Service
	peer  *discussion.Service // another process on the same backend
	clock *Clock
	store discussion.Store
	// notifier is svc's, for a test that makes a service of its own
	// hearing what svc hears.
	notifier store.Notifier
}

func newDiscussionEnv(t *testing.T, newStores NewStores) *discussionEnv {
	t.Helper()
	st := newStores(t)
	if st.Discussion == nil {
		t.Fatal("storetest: Stores.Discussion is required")
	}
	clock := NewClock()
	e := &discussionEnv{ctx: context.Background(), clock: clock, store: st.Discussion, notifier: st.Notifier}
	e.svc = discussion.New(st.Discussion, discussion.WithClock(clock.Now), discussion.WithNotifier(st.Notifier))
	e.peer = discussion.New(st.Discussion, discussion.WithClock(clock.Now), discussion.WithNotifier(st.Peer))
	return e
}

func intp(n int) *int { return &n }

func (e *discussionEnv) prompt(t *testing.T, requester string, required, timeout int) discussion.Prompt {
	t.Helper()
	p, _, err := e.svc.Create(e.ctx, discussion.NewPrompt{RequesterAgent: requester, PromptMessage: "What should I consider?", RequiredResponses: intp(required), TimeoutMinutes: intp(timeout)})
	require.NoError(t, err)
	return p
}

func (e *discussionEnv) respond(t *testing.T, id, agent string) discussion.Prompt {
	t.Helper()
	p, m, err := e.svc.Respond(e.ctx, id, discussion.Response{AgentName: agent, Message: "Consider " + agent})
	require.NoError(t, err)
	require.Equal(t, discussion.TypeDiscussionResponse, m.MessageType)
	return p
}

// RunDiscussion runs the discussion section of the suite.
func RunDiscussion(t *testing.T, newStores NewStores) {
	t.Run("CreateAndGet", func(t *testing.T) {
		t.Parallel()
		e := newDiscussionEnv(t, newStores)
		task := "task-42"
		p, m, err := e.svc.Create(e.ctx, discussion.NewPrompt{TaskID: &task, RequesterAgent: " Developer ", PromptMessage: "Before X, what should I consider?"})
		require.NoError(t, err)
		require.Equal(t, discussion.StatusCollecting, p.Status)
		require.Equal(t, "Developer", p.RequesterAgent)
		require.Equal(t, discussion.DefaultRequired, p.RequiredResponses)
		require.Equal(t, discussion.DefaultTimeoutMinutes, p.TimeoutMinutes)
		require.Equal(t, &task, p.TaskID)
		require.Nil(t, p.ResolvedAt)
		require.Empty(t, p.CollectedContext)
		require.Equal(t, m.ID, p.SquadChatID)
		require.Equal(t, discussion.TypeDiscussionPrompt, m.MessageType)
		require.Equal(t, p.ID, *m.DiscussionPromptID)
		require.Equal(t, &task, m.TaskRef, "the prompt's message refers to its task")
		require.Nil(t, m.ReplyToID)
		require.Equal(t, e.clock.Now().UTC(), p.CreatedAt)

		got, err := e.svc.Get(e.ctx, p.ID)
		require.NoError(t, err)
		require.Equal(t, p, got)
		msgs, err := e.svc.Messages(e.ctx, 10, "")
		require.NoError(t, err)
		require.Equal(t, []discussion.Message{m}, msgs)
		_, err = e.svc.Get(e.ctx, "prompt_missing")
		require.ErrorIs(t, err, discussion.ErrPromptNotFound)

		noTask, _, err := e.svc.Create(e.ctx, discussion.NewPrompt{RequesterAgent: "Developer", PromptMessage: "?"})
		require.NoError(t, err)
		got, err = e.svc.Get(e.ctx, noTask.ID)
		require.NoError(t, err)
		require.Nil(t, got.TaskID)
		msgs, err = e.svc.Messages(e.ctx, 1, "")
		require.NoError(t, err)
		require.Nil(t, msgs[0].TaskRef)
	})

	t.Run("CreateValidation", func(t *testing.T) {
		t.Parallel()
		e := newDiscussionEnv(t, newStores)
		long := string(make([]byte, discussion.MaxPromptLen+1))
		for name, in := range map[string]discussion.NewPrompt{
			"no requester":    {PromptMessage: "?"},
			"no prompt":       {RequesterAgent: "A"},
			"blank prompt":    {RequesterAgent: "A", PromptMessage: "  "},
			"long prompt":     {RequesterAgent: "A", PromptMessage: long},
			"zero required":   {RequesterAgent: "A", PromptMessage: "?", RequiredResponses: intp(0)},
			"101 required":    {RequesterAgent: "A", PromptMessage: "?", RequiredResponses: intp(101)},
			"zero timeout":    {RequesterAgent: "A", PromptMessage: "?", TimeoutMinutes: intp(0)},
			"timeout > week":  {RequesterAgent: "A", PromptMessage: "?", TimeoutMinutes: intp(discussion.MaxTimeoutMinutes + 1)},
			"invalid utf8":    {RequesterAgent: "A", PromptMessage: "\xff"},
			"negative timout": {RequesterAgent: "A", PromptMessage: "?", TimeoutMinutes: intp(-5)},
		} {
			_, _, err := e.svc.Create(e.ctx, in)
			require.ErrorIs(t, err, store.ErrInvalid, name)
		}
		msgs, err := e.svc.Messages(e.ctx, 10, "")
		require.NoError(t, err)
		require.Empty(t, msgs, "nothing written")
	})

	t.Run("RespondUntilResolved", func(t *testing.T) {
		t.Parallel()
		e := newDiscussionEnv(t, newStores)
		p := e.prompt(t, "Developer", 2, 30)
		_, _, err := e.svc.Respond(e.ctx, p.ID, discussion.Response{AgentName: "Developer", Message: "me"})
		require.ErrorIs(t, err, discussion.ErrOwnPrompt)
		require.ErrorIs(t, err, store.ErrInvalid)

		e.clock.Advance(time.Second)
		first := e.respond(t, p.ID, "Builder")
		require.Equal(t, discussion.StatusCollecting, first.Status)
		require.Len(t, first.CollectedContext, 1)
		_, _, err = e.svc.Respond(e.ctx, p.ID, discussion.Response{AgentName: "Builder", Message: "again"})
		require.ErrorIs(t, err, discussion.ErrAlreadyResponded)
		require.ErrorIs(t, err, store.ErrConflict)

		e.clock.Advance(time.Second)
		resolved, _, err := e.svc.Respond(e.ctx, p.ID, discussion.Response{AgentName: "Growth", Message: "Also think about it", IsHuman: true})
		require.NoError(t, err)
		require.Equal(t, discussion.StatusResolved, resolved.Status)
		require.NotNil(t, resolved.ResolvedAt)
		require.Equal(t, e.clock.Now().UTC(), *resolved.ResolvedAt)
		require.Equal(t, []discussion.ContextEntry{
			{Agent: "Builder", Message: "Consider Builder", CreatedAt: e.clock.Now().UTC().Add(-time.Second)},
			{Agent: "Growth", Message: "Also think about it", IsHuman: true, CreatedAt: e.clock.Now().UTC()},
		}, resolved.CollectedContext)
		got, err := e.svc.Get(e.ctx, p.ID)
		require.NoError(t, err)
		require.Equal(t, resolved, got)
		require.True(t, got.Ready())

		_, _, err = e.svc.Respond(e.ctx, p.ID, discussion.Response{AgentName: "Late", Message: "x"})
		require.ErrorIs(t, err, discussion.ErrPromptClosed)
		_, _, err = e.svc.Respond(e.ctx, "prompt_missing", discussion.Response{AgentName: "Late", Message: "x"})
		require.ErrorIs(t, err, discussion.ErrPromptNotFound)
		_, _, err = e.svc.Respond(e.ctx, p.ID, discussion.Response{AgentName: "", Message: "x"})
		require.ErrorIs(t, err, store.ErrInvalid)

		responses, err := e.svc.Responses(e.ctx, p.ID)
		require.NoError(t, err)
		require.Len(t, responses, 2)
		for i, agent := range []string{"Builder", "Growth"} {
			require.Equal(t, agent, responses[i].AgentName)
			require.Equal(t, discussion.TypeDiscussionResponse, responses[i].MessageType)
			require.Equal(t, p.ID, *responses[i].DiscussionPromptID)
		}
		require.True(t, responses[1].IsHuman)
		msgs, err := e.svc.Messages(e.ctx, 10, "")
		require.NoError(t, err)
		require.Len(t, msgs, 3, "the prompt and both responses are in the squad chat")
		_, err = e.svc.Responses(e.ctx, "prompt_missing")
		require.ErrorIs(t, err, discussion.ErrPromptNotFound)
	})

	t.Run("PromptRules", func(t *testing.T) { promptRules(t, newStores) })

	t.Run("RaceFiftyAgentsTenNeeded", func(t *testing.T) {
		t.Parallel()
		e := newDiscussionEnv(t, newStores)
		for rep := 0; rep < raceRepeats; rep++ {
			p := e.prompt(t, "Developer", 10, 30)
			var accepted, closed atomic.Int64
			errs := make(chan error, 50)
			concurrently(50, func(i int) {
				_, _, err := e.svc.Respond(e.ctx, p.ID, discussion.Response{AgentName: fmt.Sprint("agent-", i), Message: "hi"})
				switch {
				case err == nil:
					accepted.Add(1)
				case errors.Is(err, discussion.ErrPromptClosed):
					closed.Add(1)
				default:
					errs <- err
				}
			})
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			require.EqualValues(t, 10, accepted.Load())
			require.EqualValues(t, 40, closed.Load())
			got, err := e.svc.Get(e.ctx, p.ID)
			require.NoError(t, err)
			require.Equal(t, discussion.StatusResolved, got.Status)
			require.Len(t, got.CollectedContext, 10)
			require.NotNil(t, got.ResolvedAt)
			seen := map[string]bool{}
			for _, c := range got.CollectedContext {
				require.False(t, seen[c.Agent])
				seen[c.Agent] = true
			}
			responses, err := e.svc.Responses(e.ctx, p.ID)
			require.NoError(t, err)
			require.Len(t, responses, 10, "only accepted responses reach the squad chat")
		}
	})

	t.Run("Timeout", func(t *testing.T) {
		t.Parallel()
		e := newDiscussionEnv(t, newStores)
		p := e.prompt(t, "Developer", 3, 5)
		e.respond(t, p.ID, "Builder")
		other := e.prompt(t, "Developer", 1, 60)

		// At its deadline it is still open, as the seed's sweep has it
		// (created_at + timeout_minutes < now); a millisecond later it has
		// timed out.
		e.clock.Advance(5 * time.Minute)
		at, err := e.svc.Get(e.ctx, p.ID)
		require.NoError(t, err)
		require.Equal(t, discussion.StatusCollecting, at.Status, "open at its deadline")
		n, err := e.svc.Sweep(e.ctx)
		require.NoError(t, err)
		require.Zero(t, n, "no sweep at the deadline itself")
		e.clock.Advance(time.Millisecond)
		got, err := e.svc.Get(e.ctx, p.ID)
		require.NoError(t, err)
		require.Equal(t, discussion.StatusTimedOut, got.Status, "overdue reads as timed out before any sweep")
		require.Equal(t, p.Deadline(), *got.ResolvedAt)
		require.True(t, got.Ready())
		require.Len(t, got.CollectedContext, 1, "partial context is kept")
		_, _, err = e.svc.Respond(e.ctx, p.ID, discussion.Response{AgentName: "Growth", Message: "late"})
		require.ErrorIs(t, err, discussion.ErrPromptClosed)
		_, err = e.svc.Close(e.ctx, p.ID, discussion.ActionCancel)
		require.ErrorIs(t, err, discussion.ErrPromptClosed)

		var swept atomic.Int64
		concurrently(8, func(int) {
			n, err := e.svc.Sweep(e.ctx)
			if err == nil {
				swept.Add(int64(n))
			}
		})
		require.EqualValues(t, 1, swept.Load(), "concurrent sweeps time a prompt out once")
		after, err := e.svc.Get(e.ctx, p.ID)
		require.NoError(t, err)
		require.Equal(t, got, after, "the sweep records what reads already said")
		still, err := e.svc.Get(e.ctx, other.ID)
		require.NoError(t, err)
		require.Equal(t, discussion.StatusCollecting, still.Status)
	})

	t.Run("RaceSweepAndResponses", func(t *testing.T) {
		t.Parallel()
		e := newDiscussionEnv(t, newStores)
		for rep := 0; rep < raceRepeats*2; rep++ {
			p := e.prompt(t, "Developer", 5, 1)
			e.clock.Advance(59 * time.Second)
			var mu sync.Mutex
			var accepted []string
			// Ten responders and three sweepers; the first sweeper moves the
			// clock past the deadline mid-race.
			concurrently(13, func(i int) {
				if i >= 10 {
					if i == 10 {
						e.clock.Advance(time.Second + time.Millisecond)
					}
					if _, err := e.svc.Sweep(e.ctx); err != nil {
						t.Error(err)
					}
					return
				}
				agent := fmt.Sprint("agent-", i)
				_, _, err := e.svc.Respond(e.ctx, p.ID, discussion.Response{AgentName: agent, Message: "hi"})
				if err == nil {
					mu.Lock()
					accepted = append(accepted, agent)
					mu.Unlock()
				} else if !errors.Is(err, discussion.ErrPromptClosed) {
					t.Error(err)
				}
			})
			if _, err := e.svc.Sweep(e.ctx); err != nil {
				t.Fatal(err)
			}
			got, err := e.svc.Get(e.ctx, p.ID)
			require.NoError(t, err)
			var inContext []string
			for _, c := range got.CollectedContext {
				inContext = append(inContext, c.Agent)
			}
			require.ElementsMatch(t, accepted, inContext, "every accepted response is kept, no other")
			switch got.Status {
			case discussion.StatusResolved:
				require.Len(t, inContext, 5)
			case discussion.StatusTimedOut:
				require.Less(t, len(inContext), 5)
				require.Equal(t, p.Deadline(), *got.ResolvedAt)
			default:
				t.Fatalf("status %s", got.Status)
			}
		}
	})

	t.Run("ResolveAndCancel", func(t *testing.T) {
		t.Parallel()
		e := newDiscussionEnv(t, newStores)
		a := e.prompt(t, "Developer", 3, 30)
		e.respond(t, a.ID, "Builder")
		e.clock.Advance(time.Second)
		resolved, err := e.svc.Close(e.ctx, a.ID, discussion.ActionResolve)
		require.NoError(t, err)
		require.Equal(t, discussion.StatusResolved, resolved.Status)
		require.Equal(t, e.clock.Now().UTC(), *resolved.ResolvedAt)
		require.Len(t, resolved.CollectedContext, 1)
		_, err = e.svc.Close(e.ctx, a.ID, discussion.ActionCancel)
		require.ErrorIs(t, err, discussion.ErrPromptClosed)

		b := e.prompt(t, "Developer", 3, 30)
		cancelled, err := e.svc.Close(e.ctx, b.ID, discussion.ActionCancel)
		require.NoError(t, err)
		require.Equal(t, discussion.StatusCancelled, cancelled.Status)
		require.False(t, cancelled.Ready())
		require.True(t, cancelled.Final())
		_, err = e.svc.Close(e.ctx, b.ID, discussion.ActionResolve)
		require.ErrorIs(t, err, discussion.ErrPromptClosed)
		_, _, err = e.svc.Respond(e.ctx, b.ID, discussion.Response{AgentName: "Builder", Message: "x"})
		require.ErrorIs(t, err, discussion.ErrPromptClosed)
		_, err = e.svc.Close(e.ctx, "prompt_missing", discussion.ActionCancel)
		require.ErrorIs(t, err, discussion.ErrPromptNotFound)
		_, err = e.svc.Close(e.ctx, b.ID, "delete")
		require.ErrorIs(t, err, store.ErrInvalid)

		// Concurrent resolve and cancel: exactly one wins.
		for rep := 0; rep < raceRepeats; rep++ {
			c := e.prompt(t, "Developer", 3, 30)
			var wins atomic.Int64
			actions := []discussion.Action{discussion.ActionResolve, discussion.ActionCancel, discussion.ActionResolve, discussion.ActionCancel}
			concurrently(len(actions), func(i int) {
				if _, err := e.svc.Close(e.ctx, c.ID, actions[i]); err == nil {
					wins.Add(1)
				}
			})
			require.EqualValues(t, 1, wins.Load())
		}
	})

	t.Run("RequesterKey", func(t *testing.T) {
		t.Parallel()
		e := newDiscussionEnv(t, newStores)
		dev := identity.WithKey(e.ctx, identity.Key{ID: "key_dev", Name: "Developer"})
		other := identity.WithKey(e.ctx, identity.Key{ID: "key_other", Name: "Other"})
		admin := identity.WithKey(e.ctx, identity.Key{ID: "key_admin", Name: "Admin", Scopes: []identity.Scope{discussion.ScopeAdmin}})
		// The asking key is kept with the prompt, through every read and
		// every change, on every backend.
		p, _, err := e.svc.Create(dev, discussion.NewPrompt{RequesterAgent: "Developer", PromptMessage: "Which index?", RequiredResponses: intp(2)})
		require.NoError(t, err)
		require.Equal(t, "key_dev", p.RequesterKey)
		got, err := e.peer.Get(e.ctx, p.ID)
		require.NoError(t, err)
		require.Equal(t, p, got)
		answered := e.respond(t, p.ID, "Builder")
		require.Equal(t, "key_dev", answered.RequesterKey)
		listed, err := e.svc.List(e.ctx, discussion.ListQuery{})
		require.NoError(t, err)
		require.Len(t, listed, 1)
		require.Equal(t, "key_dev", listed[0].RequesterKey)

		// Another key may not close it, whatever it asks; nothing changes.
		for _, a := range []discussion.Action{discussion.ActionResolve, discussion.ActionCancel} {
			_, err = e.svc.Close(other, p.ID, a)
			require.ErrorIs(t, err, discussion.ErrNotRequester)
			require.ErrorIs(t, err, store.ErrForbidden)
		}
		_, err = e.svc.Close(other, "prompt_missing", discussion.ActionCancel)
		require.ErrorIs(t, err, discussion.ErrPromptNotFound)
		_, err = e.svc.Close(dev, p.ID, "delete")
		require.ErrorIs(t, err, store.ErrInvalid)
		got, err = e.svc.Get(e.ctx, p.ID)
		require.NoError(t, err)
		require.Equal(t, discussion.StatusCollecting, got.Status)

		// The asking key may.
		closed, err := e.svc.Close(dev, p.ID, discussion.ActionResolve)
		require.NoError(t, err)
		require.Equal(t, discussion.StatusResolved, closed.Status)
		require.Equal(t, "key_dev", closed.RequesterKey)

		// A caller that may close any prompt closes another key's, and one
		// asked without a key, which no key owns.
		q, _, err := e.svc.Create(dev, discussion.NewPrompt{PromptMessage: "Which cache?"})
		require.NoError(t, err)
		require.Equal(t, "Developer", q.RequesterAgent, "a blank name is the key's")
		_, err = e.svc.Close(admin, q.ID, discussion.ActionCancel)
		require.NoError(t, err)
		open := e.prompt(t, "Developer", 2, 30)
		require.Empty(t, open.RequesterKey)
		_, err = e.svc.Close(dev, open.ID, discussion.ActionCancel)
		require.ErrorIs(t, err, discussion.ErrNotRequester)
		_, err = e.svc.Close(e.ctx, open.ID, discussion.ActionCancel)
		require.NoError(t, err, "a caller no key authenticated (the open routes) closes any prompt")

		// A key speaks under its own name, and as a human only with
		// discussion:admin.
		_, _, err = e.svc.Create(dev, discussion.NewPrompt{RequesterAgent: "Someone Else", PromptMessage: "?"})
		requireCode(t, &store.Error{Kind: store.ErrForbidden, Code: "not_your_name"}, err)
		require.ErrorIs(t, err, store.ErrForbidden)
		r, _, err := e.svc.Create(dev, discussion.NewPrompt{PromptMessage: "Who answers?"})
		require.NoError(t, err)
		_, _, err = e.svc.Respond(other, r.ID, discussion.Response{AgentName: "Developer", Message: "me"})
		requireCode(t, &store.Error{Kind: store.ErrForbidden, Code: "not_your_name"}, err)
		_, _, err = e.svc.Respond(other, r.ID, discussion.Response{Message: "me", IsHuman: true})
		requireCode(t, &store.Error{Kind: store.ErrForbidden, Code: "missing_scope"}, err)
		_, m, err := e.svc.Respond(other, r.ID, discussion.Response{Message: "me"})
		require.NoError(t, err)
		require.Equal(t, "Other", m.AgentName)
		_, err = e.svc.PostMessage(other, discussion.Post{AgentName: "Admin", Message: "hi"})
		requireCode(t, &store.Error{Kind: store.ErrForbidden, Code: "not_your_name"}, err)
		pm, err := e.svc.PostMessage(admin, discussion.Post{Message: "hi", IsHuman: true})
		require.NoError(t, err)
		require.Equal(t, "Admin", pm.AgentName)
		require.True(t, pm.IsHuman)
	})

	t.Run("ListFilters", func(t *testing.T) {
		t.Parallel()
		e := newDiscussionEnv(t, newStores)
		ids := func(ps []discussion.Prompt) []string {
			out := []string{}
			for _, p := range ps {
				out = append(out, p.ID)
			}
			return out
		}
		list := func(q discussion.ListQuery) []string {
			t.Helper()
			ps, err := e.svc.List(e.ctx, q)
			require.NoError(t, err)
			return ids(ps)
		}
		task := "task-1"
		mine := e.prompt(t, "Builder", 2, 30)
		e.clock.Advance(time.Millisecond)
		p1, _, err := e.svc.Create(e.ctx, discussion.NewPrompt{TaskID: &task, RequesterAgent: "Developer", PromptMessage: "?"})
		require.NoError(t, err)
		e.clock.Advance(time.Millisecond)
		answeredByBuilder := e.prompt(t, "Developer", 2, 30)
		e.respond(t, answeredByBuilder.ID, "Builder")
		e.clock.Advance(time.Millisecond)
		done := e.prompt(t, "Developer", 1, 30)
		e.respond(t, done.ID, "Growth")
		e.clock.Advance(time.Millisecond)
		cancelled := e.prompt(t, "Developer", 1, 30)
		_, err = e.svc.Close(e.ctx, cancelled.ID, discussion.ActionCancel)
		require.NoError(t, err)
		e.clock.Advance(time.Millisecond)
		short := e.prompt(t, "Developer", 1, 1)

		require.Equal(t, []string{short.ID, answeredByBuilder.ID, p1.ID, mine.ID}, list(discussion.ListQuery{}), "open ones, newest first")
		require.Equal(t, []string{short.ID, p1.ID}, list(discussion.ListQuery{Agent: "Builder"}), "not its own, not answered")
		require.Equal(t, []string{p1.ID}, list(discussion.ListQuery{TaskID: task}))
		// Names and task IDs are stored trimmed; the filters are read so.
		require.Equal(t, []string{short.ID, p1.ID}, list(discussion.ListQuery{Agent: " Builder\t"}), "the agent filter is trimmed")
		require.Equal(t, []string{p1.ID}, list(discussion.ListQuery{TaskID: " " + task + " "}), "the task filter is trimmed")
		require.Equal(t, []string{done.ID}, list(discussion.ListQuery{Statuses: []discussion.Status{discussion.StatusResolved}}))
		require.Equal(t, []string{cancelled.ID, done.ID}, list(discussion.ListQuery{Statuses: []discussion.Status{discussion.StatusResolved, discussion.StatusCancelled}}))

		e.clock.Advance(time.Minute)
		require.Contains(t, list(discussion.ListQuery{}), short.ID, "open at its deadline")
		e.clock.Advance(time.Millisecond)
		require.Equal(t, []string{short.ID}, list(discussion.ListQuery{Statuses: []discussion.Status{discussion.StatusTimedOut}}), "overdue counts as timed out before a sweep")
		require.NotContains(t, list(discussion.ListQuery{}), short.ID)

		// The limit counts prompts as they stand now: open ones newer than a
		// timed-out one do not fill its page, nor an overdue one an open
		// one's.
		fresh := e.prompt(t, "Developer", 1, 30)
		require.Equal(t, []string{short.ID}, list(discussion.ListQuery{Statuses: []discussion.Status{discussion.StatusTimedOut}, Limit: 1}))
		e.clock.Advance(time.Millisecond)
		late := e.prompt(t, "Developer", 1, 1)
		e.clock.Advance(time.Minute + time.Millisecond)
		require.Equal(t, []string{fresh.ID}, list(discussion.ListQuery{Limit: 1}), "an overdue prompt is not open")
		require.Equal(t, []string{late.ID, short.ID}, list(discussion.ListQuery{Statuses: []discussion.Status{discussion.StatusTimedOut}, Limit: 2}))
		n, err := e.svc.Sweep(e.ctx)
		require.NoError(t, err)
		require.Equal(t, 2, n)
		require.Equal(t, []string{late.ID, short.ID}, list(discussion.ListQuery{Statuses: []discussion.Status{discussion.StatusTimedOut}, Limit: 2}), "swept, the same")
		_, err = e.svc.List(e.ctx, discussion.ListQuery{Statuses: []discussion.Status{"open"}})
		require.ErrorIs(t, err, store.ErrInvalid)
	})

	t.Run("SquadChat", func(t *testing.T) {
		t.Parallel()
		e := newDiscussionEnv(t, newStores)
		var posted []discussion.Message
		for i := 0; i < 5; i++ {
			m, err := e.svc.PostMessage(e.ctx, discussion.Post{AgentName: "Builder", Message: fmt.Sprint("hello ", i), IsHuman: i%2 == 0})
			require.NoError(t, err)
			require.Equal(t, discussion.TypeMessage, m.MessageType)
			require.Nil(t, m.DiscussionPromptID)
			require.Nil(t, m.TaskRef)
			require.Nil(t, m.ReplyToID)
			posted = append(posted, m)
			e.clock.Advance(time.Millisecond)
		}
		page, err := e.svc.Messages(e.ctx, 2, "")
		require.NoError(t, err)
		require.Equal(t, []discussion.Message{posted[4], posted[3]}, page)
		page, err = e.svc.Messages(e.ctx, 10, posted[3].ID)
		require.NoError(t, err)
		require.Equal(t, []discussion.Message{posted[2], posted[1], posted[0]}, page)
		_, err = e.svc.PostMessage(e.ctx, discussion.Post{AgentName: "Builder", Message: " "})
		require.ErrorIs(t, err, store.ErrInvalid)
		_, err = e.svc.Messages(e.ctx, 1000, "")
		require.ErrorIs(t, err, store.ErrInvalid)
	})

	t.Run("SquadChatReplies", func(t *testing.T) {
		t.Parallel()
		e := newDiscussionEnv(t, newStores)
		task := "task-7"
		root, err := e.svc.PostMessage(e.ctx, discussion.Post{AgentName: "Builder", Message: "who takes the login bug?", TaskRef: &task})
		require.NoError(t, err)
		require.Equal(t, &task, root.TaskRef)
		e.clock.Advance(time.Millisecond)
		reply, err := e.peer.PostMessage(e.ctx, discussion.Post{AgentName: "Rosa", Message: "I do", IsHuman: true, ReplyToID: &root.ID})
		require.NoError(t, err)
		require.Equal(t, &root.ID, reply.ReplyToID)
		e.clock.Advance(time.Millisecond)
		nested, err := e.svc.PostMessage(e.ctx, discussion.Post{AgentName: "Builder", Message: "thanks", ReplyToID: &reply.ID, TaskRef: &task})
		require.NoError(t, err)
		page, err := e.svc.Messages(e.ctx, 10, "")
		require.NoError(t, err)
		require.Equal(t, []discussion.Message{nested, reply, root}, page, "task_ref and reply_to_id read back as written")

		// A prompt's message can be answered in a thread too.
		_, pm, err := e.svc.Create(e.ctx, discussion.NewPrompt{RequesterAgent: "Developer", PromptMessage: "?"})
		require.NoError(t, err)
		_, err = e.svc.PostMessage(e.ctx, discussion.Post{AgentName: "Growth", Message: "see above", ReplyToID: &pm.ID})
		require.NoError(t, err)

		missing := "msg_missing"
		blank := "  "
		_, err = e.svc.PostMessage(e.ctx, discussion.Post{AgentName: "Builder", Message: "?", ReplyToID: &missing})
		require.ErrorIs(t, err, discussion.ErrReplyToNotFound)
		require.ErrorIs(t, err, store.ErrInvalid)
		long := strings.Repeat("x", discussion.MaxTaskIDLen+1)
		_, err = e.svc.PostMessage(e.ctx, discussion.Post{AgentName: "Builder", Message: "?", TaskRef: &long})
		require.ErrorIs(t, err, store.ErrInvalid)
		bad := "\xff"
		_, err = e.svc.PostMessage(e.ctx, discussion.Post{AgentName: "Builder", Message: "?", ReplyToID: &bad})
		require.ErrorIs(t, err, store.ErrInvalid)
		page, err = e.svc.Messages(e.ctx, 10, "")
		require.NoError(t, err)
		require.Len(t, page, 5, "nothing written by the refused posts")
		plain, err := e.svc.PostMessage(e.ctx, discussion.Post{AgentName: "Builder", Message: "!", ReplyToID: &blank, TaskRef: &blank})
		require.NoError(t, err)
		require.Nil(t, plain.ReplyToID, "a blank reply_to_id is no reply")
		require.Nil(t, plain.TaskRef)
	})

	t.Run("RaceRepliesToOneMessage", func(t *testing.T) {
		t.Parallel()
		e := newDiscussionEnv(t, newStores)
		root, err := e.svc.PostMessage(e.ctx, discussion.Post{AgentName: "Builder", Message: "thread"})
		require.NoError(t, err)
		e.clock.Advance(time.Millisecond) // the root is the oldest message
		const n = 24
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				svc := e.svc
				if i%2 == 1 {
					svc = e.peer
				}
				_, err := svc.PostMessage(e.ctx, discussion.Post{AgentName: fmt.Sprint("agent-", i), Message: "me", ReplyToID: &root.ID})
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		page, err := e.svc.Messages(e.ctx, 100, "")
		require.NoError(t, err)
		require.Len(t, page, n+1)
		for _, m := range page[:n] {
			require.Equal(t, &root.ID, m.ReplyToID)
		}
	})

	t.Run("WaitWakesAcrossProcesses", func(t *testing.T) {
		t.Parallel()
		e := newDiscussionEnv(t, newStores)
		// The waiter hears of the peer's answer through the notifier
		// alone: a subscription shared across processes re-reads only
		// every 30 s, past this test's deadline, so a notifier that does
		// not carry the change fails it.
		n, subscribed := watched(e.notifier)
		waiter := discussion.New(e.store, discussion.WithClock(e.clock.Now), discussion.WithNotifier(n))
		p := e.prompt(t, "Developer", 1, 30)
		type result struct {
			p   discussion.Prompt
			err error
		}
		done := make(chan result, 1)
		go func() {
			got, err := waiter.Wait(e.ctx, p.ID, 30*time.Second)
			done <- result{got, err}
		}()
		<-subscribed
		_, _, err := e.peer.Respond(e.ctx, p.ID, discussion.Response{AgentName: "Builder", Message: "go"})
		require.NoError(t, err)
		select {
		case r := <-done:
			require.NoError(t, r.err)
			require.Equal(t, discussion.StatusResolved, r.p.Status)
		case <-time.After(20 * time.Second):
			t.Fatal("Wait did not return after the resolving response")
		}

		q := e.prompt(t, "Developer", 1, 30)
		got, err := e.svc.Wait(e.ctx, q.ID, 50*time.Millisecond)
		require.NoError(t, err)
		require.Equal(t, discussion.StatusCollecting, got.Status, "an unchanged prompt after the wait")
		_, err = e.svc.Wait(e.ctx, "prompt_missing", time.Second)
		require.ErrorIs(t, err, discussion.ErrPromptNotFound)
	})
}
