package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/discussion"
)

// The rules of a prompt are written once, as methods of discussion.Prompt
// (Respond, Close, TimeOut); memstore and pgstore call them inside their
// atomic step, and redisstore's scripts and pgstore's sweep carry copies.
// promptRules walks every branch of each method, edges and the order of
// its checks included, against a backend: each case asks the store, asks
// the Go method on the prompt as stored, and requires both to agree with
// each other and with the outcome the case names. A copy that drifts from
// its method fails here.

// ruleEnv is a discussion store with prompts made to order.
type ruleEnv struct {
	ctx   context.Context
	st    discussion.Store
	now   time.Time
	n     int
	msgID int
}

// create stores a prompt created at e.now by requester "Asker" in status
// st, needing required responses, timing out after timeout minutes.
func (e *ruleEnv) create(t *testing.T, st discussion.Status, required, timeout int) discussion.Prompt {
	t.Helper()
	e.n++
	p := discussion.Prompt{
		ID: fmt.Sprintf("prompt_rule_%03d", e.n), RequesterAgent: "Asker", PromptMessage: "?", RequiredResponses: required,
		TimeoutMinutes: timeout, Status: st, CollectedContext: []discussion.ContextEntry{}, CreatedAt: e.now,
	}
	m := discussion.Message{ID: e.nextMsgID(), AgentName: "Asker", Message: "?", MessageType: discussion.TypeDiscussionPrompt, DiscussionPromptID: &p.ID, CreatedAt: e.now}
	p.SquadChatID = m.ID
	require.NoError(t, e.st.CreatePrompt(e.ctx, p, m))
	return p
}

func (e *ruleEnv) nextMsgID() string {
	e.msgID++
	return fmt.Sprintf("msg_rule_%04d", e.msgID)
}

func (e *ruleEnv) get(t *testing.T, id string) discussion.Prompt {
	t.Helper()
	p, err := e.st.GetPrompt(e.ctx, id)
	require.NoError(t, err)
	return p
}

// clonePrompt is a copy whose collected context is its own.
func clonePrompt(p discussion.Prompt) discussion.Prompt {
	p.CollectedContext = slices.Clone(p.CollectedContext)
	return p
}

// respond has agent answer prompt id at at through the store and through
// discussion.Prompt.Respond, requires both to answer want, and returns the
// prompt as stored after. On error nothing may be written: neither the
// prompt nor the squad chat changes.
func (e *ruleEnv) respond(t *testing.T, id, agent string, at time.Time, want error) discussion.Prompt {
	t.Helper()
	before := e.get(t, id)
	expect := clonePrompt(before)
	entry := discussion.ContextEntry{Agent: agent, Message: "because " + agent, CreatedAt: at}
	require.Equal(t, want, expect.Respond(entry), "discussion.Prompt.Respond")
	m := discussion.Message{ID: e.nextMsgID(), AgentName: agent, Message: entry.Message, MessageType: discussion.TypeDiscussionResponse, DiscussionPromptID: &id, CreatedAt: at}
	got, err := e.st.Respond(e.ctx, discussion.RespondParams{PromptID: id, Entry: entry, Message: m})
	after := e.get(t, id)
	if want != nil {
		require.ErrorIs(t, err, want, "the store decides as discussion.Prompt.Respond")
		require.Equal(t, before, after, "nothing written on error")
		msgs, err := e.st.ListMessages(e.ctx, 500, "")
		require.NoError(t, err)
		require.False(t, slices.ContainsFunc(msgs, func(x discussion.Message) bool { return x.ID == m.ID }), "no message on error")
		return after
	}
	require.NoError(t, err, "the store decides as discussion.Prompt.Respond")
	require.Equal(t, expect, got, "the store changes the prompt as discussion.Prompt.Respond")
	require.Equal(t, expect, after)
	return after
}

// close closes prompt id to status to at now through the store and
// through discussion.Prompt.Close, and requires both to answer want.
func (e *ruleEnv) close(t *testing.T, id string, to discussion.Status, now time.Time, want error) {
	t.Helper()
	before := e.get(t, id)
	expect := clonePrompt(before)
	require.Equal(t, want, expect.Close(to, now), "discussion.Prompt.Close")
	got, err := e.st.ClosePrompt(e.ctx, id, to, now)
	after := e.get(t, id)
	if want != nil {
		require.ErrorIs(t, err, want, "the store decides as discussion.Prompt.Close")
		require.Equal(t, before, after, "nothing written on error")
		return
	}
	require.NoError(t, err, "the store decides as discussion.Prompt.Close")
	require.Equal(t, expect, got, "the store changes the prompt as discussion.Prompt.Close")
	require.Equal(t, expect, after)
}

func promptRules(t *testing.T, newStores NewStores) {
	newEnv := func(t *testing.T) *ruleEnv {
		return &ruleEnv{ctx: context.Background(), st: newStores(t).Discussion, now: NewClock().Now()}
	}
	const ms = time.Millisecond

	t.Run("Respond", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		open := func(required int) discussion.Prompt { return e.create(t, discussion.StatusCollecting, required, 10) }
		soon := e.now.Add(time.Second)

		_, err := e.st.Respond(e.ctx, discussion.RespondParams{PromptID: "prompt_missing",
			Entry:   discussion.ContextEntry{Agent: "A", Message: "x", CreatedAt: soon},
			Message: discussion.Message{ID: e.nextMsgID(), AgentName: "A", Message: "x", MessageType: discussion.TypeDiscussionResponse, CreatedAt: soon}})
		require.ErrorIs(t, err, discussion.ErrPromptNotFound)

		// Below the quorum the prompt keeps collecting; the response that
		// reaches it resolves the prompt at the response's time.
		p := open(2)
		got := e.respond(t, p.ID, "A", soon, nil)
		require.Equal(t, discussion.StatusCollecting, got.Status)
		require.Nil(t, got.ResolvedAt)
		got = e.respond(t, p.ID, "B", soon.Add(ms), nil)
		require.Equal(t, discussion.StatusResolved, got.Status)
		require.Equal(t, soon.Add(ms), *got.ResolvedAt)
		require.Len(t, got.CollectedContext, 2)

		one := open(1)
		got = e.respond(t, one.ID, "A", soon, nil)
		require.Equal(t, discussion.StatusResolved, got.Status, "a quorum of one resolves at the first response")

		// Pending accepts responses as collecting does.
		pending := e.create(t, discussion.StatusPending, 2, 10)
		got = e.respond(t, pending.ID, "A", soon, nil)
		require.Equal(t, discussion.StatusPending, got.Status)

		// The deadline's edge: at it a response counts, a millisecond
		// after it the prompt has timed out (the seed times out when
		// created_at + timeout_minutes < now).
		edge := open(3)
		e.respond(t, edge.ID, "A", edge.Deadline().Add(-ms), nil)
		e.respond(t, edge.ID, "B", edge.Deadline(), nil)
		e.respond(t, edge.ID, "C", edge.Deadline().Add(ms), discussion.ErrPromptClosed)
		e.respond(t, edge.ID, "D", edge.Deadline().Add(time.Hour), discussion.ErrPromptClosed)

		// Each closed status refuses.
		for _, to := range []discussion.Status{discussion.StatusResolved, discussion.StatusCancelled} {
			c := open(2)
			e.close(t, c.ID, to, soon, nil)
			e.respond(t, c.ID, "A", soon, discussion.ErrPromptClosed)
		}
		resolved := open(1)
		e.respond(t, resolved.ID, "A", soon, nil)
		e.respond(t, resolved.ID, "B", soon, discussion.ErrPromptClosed)

		// The order of the checks: own prompt first, even closed or late;
		// closed before already answered.
		own := open(2)
		e.respond(t, own.ID, "Asker", soon, discussion.ErrOwnPrompt)
		e.respond(t, own.ID, "Asker", own.Deadline().Add(ms), discussion.ErrOwnPrompt)
		e.close(t, own.ID, discussion.StatusCancelled, soon, nil)
		e.respond(t, own.ID, "Asker", soon, discussion.ErrOwnPrompt)

		twice := open(3)
		e.respond(t, twice.ID, "A", soon, nil)
		e.respond(t, twice.ID, "A", soon.Add(ms), discussion.ErrAlreadyResponded)
		e.respond(t, twice.ID, "A", twice.Deadline().Add(ms), discussion.ErrPromptClosed)
		e.close(t, twice.ID, discussion.StatusResolved, soon.Add(ms), nil)
		e.respond(t, twice.ID, "A", soon.Add(2*ms), discussion.ErrPromptClosed)
		e.respond(t, twice.ID, "B", soon.Add(2*ms), discussion.ErrPromptClosed)
	})

	t.Run("Close", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		soon := e.now.Add(time.Second)
		_, err := e.st.ClosePrompt(e.ctx, "prompt_missing", discussion.StatusCancelled, soon)
		require.ErrorIs(t, err, discussion.ErrPromptNotFound)

		for _, to := range []discussion.Status{discussion.StatusResolved, discussion.StatusCancelled} {
			for _, from := range []discussion.Status{discussion.StatusCollecting, discussion.StatusPending} {
				p := e.create(t, from, 2, 10)
				e.respond(t, p.ID, "A", soon, nil)
				e.close(t, p.ID, to, soon.Add(ms), nil)
				e.close(t, p.ID, to, soon.Add(2*ms), discussion.ErrPromptClosed)
			}
			// The deadline's edge: closed a millisecond after it, open at it.
			p := e.create(t, discussion.StatusCollecting, 2, 10)
			e.close(t, p.ID, to, p.Deadline().Add(ms), discussion.ErrPromptClosed)
			e.close(t, p.ID, to, p.Deadline(), nil)
			// Resolved by its quorum.
			q := e.create(t, discussion.StatusCollecting, 1, 10)
			e.respond(t, q.ID, "A", soon, nil)
			e.close(t, q.ID, to, soon, discussion.ErrPromptClosed)
		}
	})

	t.Run("TimeOut", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		// Every prompt times out after a minute but two; the sweep runs a
		// millisecond past their deadline.
		at := e.now.Add(time.Minute + ms)
		prompts := []discussion.Prompt{
			e.create(t, discussion.StatusCollecting, 2, 1), // due: a millisecond past its deadline
			e.create(t, discussion.StatusPending, 2, 1),    // due
			e.create(t, discussion.StatusCollecting, 2, 2), // a minute to go
		}
		e.now = e.now.Add(ms)
		prompts = append(prompts, e.create(t, discussion.StatusCollecting, 2, 1)) // at its deadline: not yet
		e.now = e.now.Add(-2 * ms)
		partial := e.create(t, discussion.StatusCollecting, 3, 1) // due, with a response kept
		e.respond(t, partial.ID, "A", e.now.Add(time.Second), nil)
		quorum := e.create(t, discussion.StatusCollecting, 1, 1) // resolved before
		e.respond(t, quorum.ID, "A", e.now.Add(time.Second), nil)
		cancelled := e.create(t, discussion.StatusCollecting, 2, 1) // cancelled before
		e.close(t, cancelled.ID, discussion.StatusCancelled, e.now.Add(time.Second), nil)
		prompts = append(prompts, partial, quorum, cancelled)

		var wantIDs []string
		want := map[string]discussion.Prompt{}
		for _, p := range prompts {
			cur := e.get(t, p.ID)
			if cur.TimeOut(at) {
				wantIDs = append(wantIDs, p.ID)
			}
			want[p.ID] = cur
		}
		require.Equal(t, []string{prompts[0].ID, prompts[1].ID, partial.ID}, wantIDs, "discussion.Prompt.TimeOut")

		ids, err := e.st.TimeOut(e.ctx, at)
		require.NoError(t, err)
		require.ElementsMatch(t, wantIDs, ids, "the store times out what discussion.Prompt.TimeOut does")
		for _, p := range prompts {
			require.Equal(t, want[p.ID], e.get(t, p.ID), "the store records the timeout as discussion.Prompt.TimeOut")
		}
		require.Equal(t, prompts[0].Deadline(), *want[prompts[0].ID].ResolvedAt, "resolved at the deadline")
		require.Len(t, want[partial.ID].CollectedContext, 1, "partial context is kept")

		ids, err = e.st.TimeOut(e.ctx, at.Add(time.Hour))
		require.NoError(t, err)
		require.ElementsMatch(t, []string{prompts[2].ID, prompts[3].ID}, ids, "a prompt times out once; the later ones at their turn")
		late := e.get(t, prompts[2].ID)
		require.Equal(t, prompts[2].Deadline(), *late.ResolvedAt, "at its deadline, however late the sweep")
	})
}
