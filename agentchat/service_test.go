package agentchat_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"

	"github.com/agorahq/agora/agentchat"
	"github.com/agorahq/agora/store"
	"github.com/agorahq/agora/store/memstore"
)

// scripted is a Runner that plays back events, waiting on release (when
// set) before it finishes, so tests control when a run ends.
type scripted struct {
	mu       sync.Mutex
	requests []agentchat.RunRequest
	release  chan struct{}
	started  chan string
}

func (r *scripted) Run(ctx context.Context, req agentchat.RunRequest) (agentchat.RunResult, error) {
	r.mu.Lock()
	r.requests = append(r.requests, req)
	r.mu.Unlock()
	if r.started != nil {
		r.started <- req.Message
	}
	req.OnEvent(agentchat.Event{Type: agentchat.EventSystem, Content: "init", SessionID: "sess-1"})
	req.OnEvent(agentchat.Event{Type: agentchat.EventAssistant, Content: "On it: " + req.Message})
	if r.release != nil {
		select {
		case <-r.release:
		case <-ctx.Done():
			req.OnEvent(agentchat.Event{Type: agentchat.EventError, Content: "stopped"})
			return agentchat.RunResult{SessionID: "sess-1", Stopped: "cancelled"}, nil
		}
	}
	req.OnEvent(agentchat.Event{Type: agentchat.EventDone, Result: "ok"})
	return agentchat.RunResult{SessionID: "sess-1"}, nil
}

func waitStatus(t *testing.T, svc *agentchat.Service, id string, want agentchat.Status) agentchat.Conversation {
	t.Helper()
	var c agentchat.Conversation
	require.Eventually(t, func() bool {
		c, _, _ = svc.Conversation(context.Background(), id)
		return c.Status == want
	}, 5*time.Second, 5*time.Millisecond, "status %s", want)
	return c
}

func TestSendRunsAndStoresEveryEvent(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	svc := agentchat.New(st, &scripted{}, agentchat.WithNotifier(st))
	defer svc.Close()
	c, err := svc.Create(ctx, agentchat.NewConversation{Title: ""})
	require.NoError(t, err)
	sub, err := svc.Subscribe(ctx, c.ID)
	require.NoError(t, err)
	defer sub.Close()

	res, err := svc.Send(ctx, c.ID, "fix the footer")
	require.NoError(t, err)
	require.False(t, res.Queued)
	require.EqualValues(t, 1, res.Message.ID)
	got := waitStatus(t, svc, c.ID, agentchat.StatusIdle)
	require.Equal(t, "sess-1", got.SessionID)
	require.Equal(t, "fix the footer", got.Title)
	// The closing status event follows the conversation's status (see
	// TestStatusEventFollowsTheConversation).
	var ms []agentchat.Message
	require.Eventually(t, func() bool {
		_, ms, err = svc.Conversation(ctx, c.ID)
		return err == nil && len(ms) > 0 && ms[len(ms)-1].Type == agentchat.EventStatus
	}, 5*time.Second, 5*time.Millisecond)
	var types []agentchat.EventType
	for i, m := range ms {
		require.EqualValues(t, i+1, m.ID, "IDs rise by one")
		types = append(types, m.Type)
	}
	require.Equal(t, []agentchat.EventType{"user", "system", "assistant", "done", "status"}, types)
	require.Equal(t, "On it: fix the footer", ms[2].Content)
	require.Contains(t, ms[3].Content, `"conversation_id":"`+c.ID+`"`)
	select {
	case <-sub.C:
	case <-time.After(time.Second):
		t.Fatal("no notification")
	}
	after, err := svc.Messages(ctx, c.ID, 2)
	require.NoError(t, err)
	require.Len(t, after, 3)
}

func TestOneRunAtATime(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	r := &scripted{release: make(chan struct{}), started: make(chan string, 4)}
	svc := agentchat.New(st, r)
	defer svc.Close()
	a, _ := svc.Create(ctx, agentchat.NewConversation{Title: "a"})
	b, _ := svc.Create(ctx, agentchat.NewConversation{Title: "b"})
	_, err := svc.Send(ctx, a.ID, "first")
	require.NoError(t, err)
	require.Equal(t, "first", <-r.started)
	waitStatus(t, svc, a.ID, agentchat.StatusRunning)
	// The runner says it started before it reports its first two events.
	require.Eventually(t, func() bool {
		_, ms, err := svc.Conversation(ctx, a.ID)
		return err == nil && len(ms) == 3
	}, 5*time.Second, 5*time.Millisecond, "the user message and the run's first two events are stored")

	res, err := svc.Send(ctx, a.ID, "again")
	require.ErrorIs(t, err, agentchat.ErrBusy)
	require.False(t, res.Queued)
	require.EqualValues(t, 4, res.Message.ID, "the refused message is stored")

	res, err = svc.Send(ctx, b.ID, "second")
	require.NoError(t, err)
	require.True(t, res.Queued)
	waitStatus(t, svc, b.ID, agentchat.StatusQueued)
	require.ErrorIs(t, svc.Delete(ctx, b.ID), agentchat.ErrBusy)

	r.release <- struct{}{}
	require.Equal(t, "second", <-r.started, "the queue runs in order")
	waitStatus(t, svc, a.ID, agentchat.StatusIdle)
	r.release <- struct{}{}
	waitStatus(t, svc, b.ID, agentchat.StatusIdle)
	require.Len(t, r.requests, 2)
	require.Equal(t, []agentchat.Turn{{Role: "user", Content: "first"}, {Role: "assistant", Content: "On it: first"}, {Role: "user", Content: "again"}}, historyOf(t, svc, a.ID))
}

func historyOf(t *testing.T, svc *agentchat.Service, id string) []agentchat.Turn {
	_, ms, err := svc.Conversation(context.Background(), id)
	require.NoError(t, err)
	var out []agentchat.Turn
	for _, m := range ms {
		if m.Type == agentchat.EventUser || m.Type == agentchat.EventAssistant {
			out = append(out, agentchat.Turn{Role: string(m.Type), Content: m.Content})
		}
	}
	return out[:3]
}

func TestRejectWhenBusy(t *testing.T) {
	ctx := context.Background()
	r := &scripted{release: make(chan struct{}), started: make(chan string, 1)}
	svc := agentchat.New(memstore.New(), r, agentchat.WithRejectWhenBusy())
	defer svc.Close()
	a, _ := svc.Create(ctx, agentchat.NewConversation{Title: "a"})
	b, _ := svc.Create(ctx, agentchat.NewConversation{Title: "b"})
	_, err := svc.Send(ctx, a.ID, "first")
	require.NoError(t, err)
	<-r.started
	_, err = svc.Send(ctx, b.ID, "second")
	require.ErrorIs(t, err, agentchat.ErrBusy)
	close(r.release)
}

func TestCancelAndInterrupted(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	r := &scripted{release: make(chan struct{}), started: make(chan string, 2)}
	svc := agentchat.New(st, r)
	a, _ := svc.Create(ctx, agentchat.NewConversation{Title: "a"})
	b, _ := svc.Create(ctx, agentchat.NewConversation{Title: "b"})
	require.ErrorIs(t, svc.Cancel(ctx, a.ID), agentchat.ErrNotRunning)
	_, err := svc.Send(ctx, a.ID, "long job")
	require.NoError(t, err)
	<-r.started
	_, err = svc.Send(ctx, b.ID, "waiting")
	require.NoError(t, err)
	require.NoError(t, svc.Cancel(ctx, b.ID))
	waitStatus(t, svc, b.ID, agentchat.StatusCancelled)
	require.NoError(t, svc.Cancel(ctx, a.ID))
	waitStatus(t, svc, a.ID, agentchat.StatusCancelled)
	svc.Close()
	require.Empty(t, svc.Running())

	// A process that died mid-run leaves the conversation running; once
	// its lease has ended, the next one to start marks it interrupted.
	require.NoError(t, st.UpdateConversation(ctx, agentchat.ConversationUpdate{ID: a.ID, Status: agentchat.StatusRunning, SessionID: "", Title: "", At: time.Now(),
		LeaseUntil: time.Now().Add(-time.Second)}))
	next := agentchat.New(st, r)
	defer next.Close()
	n, err := next.Start(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	c, _, _ := next.Conversation(ctx, a.ID)
	require.Equal(t, agentchat.StatusInterrupted, c.Status)
	_, err = next.Send(ctx, "conv_missing", "x")
	require.ErrorIs(t, err, agentchat.ErrConversationNotFound)
	_, err = next.Send(ctx, a.ID, " ")
	require.Error(t, err)
	require.NoError(t, next.Delete(ctx, b.ID))
	require.ErrorIs(t, next.Delete(ctx, b.ID), agentchat.ErrConversationNotFound)
}

func TestCancelFromAnotherProcess(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	r := &scripted{release: make(chan struct{}), started: make(chan string, 1)}
	here := agentchat.New(st, r, agentchat.WithNotifier(st))
	defer here.Close()
	there := agentchat.New(st, r, agentchat.WithNotifier(st))
	defer there.Close()
	for _, svc := range []*agentchat.Service{here, there} {
		_, err := svc.Start(ctx)
		require.NoError(t, err)
	}
	c, _ := here.Create(ctx, agentchat.NewConversation{Title: "remote"})
	_, err := here.Send(ctx, c.ID, "long job")
	require.NoError(t, err)
	<-r.started
	require.NoError(t, there.Cancel(ctx, c.ID), "the other process passes the cancel on")
	waitStatus(t, here, c.ID, agentchat.StatusCancelled)
	require.ErrorIs(t, there.Cancel(ctx, c.ID), agentchat.ErrNotRunning)
}

// lossyNotifier is a notifier shared by processes that loses every
// cancel, as one does while the listening connection of the process that
// runs the conversation is down: Publish on the cancel topic fails, and a
// subscriber to that topic hears only the empty events the test sends on
// reconnected (the notifier's "events may have been lost"). It publishes
// in process (notify.InProcess), so the service calls its Publish
// directly and gets its error, where an Async notifier would drop it.
type lossyNotifier struct {
	store.Notifier
	reconnected chan []byte  // delivered to the subscriber of the cancel topic
	lost        atomic.Int32 // cancels Publish lost
}

// cancelTopic is the service's.
const cancelTopic = "agentchat:cancel"

func newLossy(n store.Notifier) *lossyNotifier {
	return &lossyNotifier{Notifier: n, reconnected: make(chan []byte)}
}

func (n *lossyNotifier) PublishesInProcess() {}

func (n *lossyNotifier) Publish(ctx context.Context, topic string, payload []byte) error {
	if topic == cancelTopic {
		n.lost.Add(1)
		return errors.New("notifier: the connection is down")
	}
	return n.Notifier.Publish(ctx, topic, payload)
}

func (n *lossyNotifier) Subscribe(ctx context.Context, topic string) (*store.Subscription, error) {
	if topic != cancelTopic {
		return n.Notifier.Subscribe(ctx, topic)
	}
	ctx, stop := context.WithCancel(ctx)
	c := make(chan []byte)
	go func() {
		defer close(c)
		for {
			select {
			case <-ctx.Done():
				return
			case e := <-n.reconnected:
				select {
				case c <- e:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return store.NewSubscription(c, false, stop), nil
}

// lossyProcesses returns two started services sharing st, as two
// processes would, each with its lossyNotifier on st, both running r with
// the given run lease. They close with t.
func lossyProcesses(t *testing.T, st *memstore.Store, r agentchat.Runner, lease time.Duration) (here, there *agentchat.Service, hereN, thereN *lossyNotifier) {
	hereN, thereN = newLossy(st), newLossy(st)
	here = agentchat.New(st, r, agentchat.WithNotifier(hereN), agentchat.WithRunLease(lease))
	t.Cleanup(here.Close)
	there = agentchat.New(st, r, agentchat.WithNotifier(thereN), agentchat.WithRunLease(lease))
	t.Cleanup(there.Close)
	for _, svc := range []*agentchat.Service{here, there} {
		_, err := svc.Start(context.Background())
		require.NoError(t, err)
	}
	return here, there, hereN, thereN
}

// A cancel sent from another process reaches the run though the notifier
// lost its message: the request is stored, and the process running the
// conversation finds it when it renews its lease (every third of it),
// for the run going and for a run queued behind it. The lost message is
// no error of the cancel.
func TestCancelElsewhereSurvivesALostMessage(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	r := &scripted{release: make(chan struct{}), started: make(chan string, 2)}
	here, there, _, lossy := lossyProcesses(t, st, r, 300*time.Millisecond)
	a, _ := here.Create(ctx, agentchat.NewConversation{Title: "a"})
	b, _ := here.Create(ctx, agentchat.NewConversation{Title: "b"})
	_, err := here.Send(ctx, a.ID, "long job")
	require.NoError(t, err)
	require.Equal(t, "long job", <-r.started)
	res, err := here.Send(ctx, b.ID, "waiting")
	require.NoError(t, err)
	require.True(t, res.Queued)

	require.NoError(t, there.Cancel(ctx, b.ID), "the request is stored: the lost message is no error")
	waitStatus(t, here, b.ID, agentchat.StatusCancelled)
	require.NoError(t, there.Cancel(ctx, a.ID))
	waitStatus(t, here, a.ID, agentchat.StatusCancelled)
	require.EqualValues(t, 2, lossy.lost.Load(), "both messages were lost")
	require.Empty(t, here.Running())
	require.ErrorIs(t, there.Cancel(ctx, a.ID), agentchat.ErrNotRunning)
	for _, id := range []string{a.ID, b.ID} {
		ms, err := st.ListChatMessages(ctx, id, 0)
		require.NoError(t, err)
		last := ms[len(ms)-1]
		require.Equal(t, agentchat.EventStatus, last.Type, "the stream ends with the run's closing status")
		require.JSONEq(t, string(agentchat.StatusCancelled.Closing().Data()), last.Content)
	}
}

// A notifier that reconnected (its empty event on the cancel topic) may
// have lost cancels: the process renews at once and stops the runs whose
// cancel was requested meanwhile, not a third of a lease later.
func TestReconnectedNotifierRechecksCancels(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	r := &scripted{release: make(chan struct{}), started: make(chan string, 1)}
	// No renewal comes by itself during the test.
	here, there, lossy, _ := lossyProcesses(t, st, r, time.Hour)
	c, _ := here.Create(ctx, agentchat.NewConversation{Title: "cut"})
	_, err := here.Send(ctx, c.ID, "long job")
	require.NoError(t, err)
	<-r.started
	require.NoError(t, there.Cancel(ctx, c.ID))
	time.Sleep(50 * time.Millisecond)
	got, err := here.Get(ctx, c.ID)
	require.NoError(t, err)
	require.Equal(t, agentchat.StatusRunning, got.Status, "the message was lost: nothing has stopped the run yet")
	select {
	case lossy.reconnected <- nil:
	case <-time.After(5 * time.Second):
		t.Fatal("nothing listens for cancels")
	}
	waitStatus(t, here, c.ID, agentchat.StatusCancelled)
}

// traced is a Runner that records the trace its run's context carries.
type traced struct{ got chan trace.SpanContext }

func (r traced) Run(ctx context.Context, req agentchat.RunRequest) (agentchat.RunResult, error) {
	r.got <- trace.SpanContextFromContext(ctx)
	req.OnEvent(agentchat.Event{Type: agentchat.EventDone, Result: "ok"})
	return agentchat.RunResult{}, nil
}

// TestRunCarriesTheSendersTrace: the run outlives the request that sent
// the message, yet its context carries that request's trace.
func TestRunCarriesTheSendersTrace(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	r := traced{got: make(chan trace.SpanContext, 2)}
	svc := agentchat.New(st, r)
	defer svc.Close()
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled})
	c, err := svc.Create(ctx, agentchat.NewConversation{})
	require.NoError(t, err)
	_, err = svc.Send(trace.ContextWithSpanContext(ctx, sc), c.ID, "traced")
	require.NoError(t, err)
	got := <-r.got
	require.Equal(t, sc.TraceID(), got.TraceID())
	require.Equal(t, sc.SpanID(), got.SpanID())
	waitStatus(t, svc, c.ID, agentchat.StatusIdle)
	_, err = svc.Send(ctx, c.ID, "not traced")
	require.NoError(t, err)
	require.False(t, (<-r.got).IsValid())
}

// statusWatch is a store that, when a status event is appended, reads the
// conversation's status as stored by then.
type statusWatch struct {
	agentchat.Store
	seen chan agentchat.Status
}

func (w statusWatch) AppendChatMessage(ctx context.Context, m agentchat.Message) (agentchat.Message, error) {
	if m.Type == agentchat.EventStatus {
		c, err := w.GetConversation(ctx, m.ConversationID)
		if err == nil {
			w.seen <- c.Status
		}
	}
	return w.Store.AppendChatMessage(ctx, m)
}

// A run's closing status event is stored once the conversation says the
// run ended: the chat page re-reads the conversation on that event, and
// would otherwise show it running.
func TestStatusEventFollowsTheConversation(t *testing.T) {
	ctx := context.Background()
	w := statusWatch{Store: memstore.New(), seen: make(chan agentchat.Status, 4)}
	svc := agentchat.New(w, &scripted{})
	defer svc.Close()
	c, err := svc.Create(ctx, agentchat.NewConversation{Title: "t"})
	require.NoError(t, err)
	_, err = svc.Send(ctx, c.ID, "hello")
	require.NoError(t, err)
	select {
	case st := <-w.seen:
		require.Equal(t, agentchat.StatusIdle, st)
	case <-time.After(5 * time.Second):
		t.Fatal("the run never ended")
	}
}

// chatty is a Runner that reports an event every few milliseconds until
// it is stopped, or gives up after a while.
type chatty struct{ started chan struct{} }

func (r chatty) Run(ctx context.Context, req agentchat.RunRequest) (agentchat.RunResult, error) {
	r.started <- struct{}{}
	for range 500 {
		select {
		case <-ctx.Done():
			return agentchat.RunResult{Stopped: "cancelled"}, nil
		case <-time.After(10 * time.Millisecond):
			req.OnEvent(agentchat.Event{Type: agentchat.EventAssistant, Content: "working"})
		}
	}
	return agentchat.RunResult{}, nil
}

// A run whose conversation was deleted under it (another process took the
// run for stopped) stops its agent instead of working on for nothing.
func TestRunStopsWhenItsConversationIsDeleted(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	r := chatty{started: make(chan struct{}, 1)}
	svc := agentchat.New(st, r)
	defer svc.Close()
	c, err := svc.Create(ctx, agentchat.NewConversation{Title: "doomed"})
	require.NoError(t, err)
	_, err = svc.Send(ctx, c.ID, "long job")
	require.NoError(t, err)
	<-r.started
	// A process elsewhere takes the run for stopped, as it would were this
	// one paused past its lease.
	ids, err := st.InterruptRunning(ctx, time.Now().Add(agentchat.DefaultRunLease))
	require.NoError(t, err)
	require.Equal(t, []string{c.ID}, ids)
	require.NoError(t, st.DeleteConversation(ctx, c.ID))
	require.Eventually(t, func() bool { return svc.Running() == "" }, 2*time.Second, 5*time.Millisecond, "the run stopped")
}

// Close stops this process's runs as a process that stops does: the run
// going and the runs queued behind it end interrupted, each with its
// closing status event, so no conversation stays busy for the processes
// sharing the store (which could then neither delete it nor see it end).
func TestCloseInterruptsTheRunAndTheQueue(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	r := &scripted{release: make(chan struct{}), started: make(chan string, 2)}
	svc := agentchat.New(st, r)
	a, _ := svc.Create(ctx, agentchat.NewConversation{Title: "a"})
	b, _ := svc.Create(ctx, agentchat.NewConversation{Title: "b"})
	_, err := svc.Send(ctx, a.ID, "long job")
	require.NoError(t, err)
	<-r.started
	res, err := svc.Send(ctx, b.ID, "waiting")
	require.NoError(t, err)
	require.True(t, res.Queued)
	svc.Close()
	for _, id := range []string{a.ID, b.ID} {
		c, err := st.GetConversation(ctx, id)
		require.NoError(t, err)
		require.Equal(t, agentchat.StatusInterrupted, c.Status, c.Title)
		ms, err := st.ListChatMessages(ctx, id, 0)
		require.NoError(t, err)
		last := ms[len(ms)-1]
		require.Equal(t, agentchat.EventStatus, last.Type, c.Title)
		require.JSONEq(t, `{"status":"interrupted"}`, last.Content, c.Title)
		require.NoError(t, st.DeleteConversation(ctx, id), "nothing runs it any more")
	}
}

// TestTimesAreMilliseconds: the Service stamps times to the millisecond,
// as every backend keeps them, so conversations changed within one
// millisecond list alike on every backend (the higher ID first), not by
// a finer time only some backends keep.
func TestTimesAreMilliseconds(t *testing.T) {
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var mu sync.Mutex
	tick := base
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		tick = tick.Add(10 * time.Microsecond)
		return tick
	}
	st := memstore.New()
	svc := agentchat.New(st, &scripted{}, agentchat.WithClock(clock))
	ctx := context.Background()
	a, err := svc.Create(ctx, agentchat.NewConversation{Title: "a"})
	require.NoError(t, err)
	b, err := svc.Create(ctx, agentchat.NewConversation{Title: "b"})
	require.NoError(t, err)
	require.Equal(t, base, a.CreatedAt)
	require.Equal(t, base, b.UpdatedAt)
	_, err = svc.Send(ctx, a.ID, "hello")
	require.NoError(t, err)
	c := waitStatus(t, svc, a.ID, agentchat.StatusIdle)
	require.Equal(t, base, c.UpdatedAt, "still within the first millisecond")
	list, err := svc.Conversations(ctx, agentchat.ConversationsQuery{})
	require.NoError(t, err)
	require.Equal(t, []string{b.ID, a.ID}, []string{list[0].ID, list[1].ID})
}

// TestLiveRunsAreSpared: a process that starts interrupts only the runs
// whose lease has ended, the leftovers of a process that stopped, and ends
// their streams with the closing status; a live process's run, its lease
// renewed, goes on however many leases pass, and a leftover whose lease
// was still running is interrupted by the sweep once it ends.
func TestLiveRunsAreSpared(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	const lease = 60 * time.Millisecond
	release := make(chan struct{})
	live := agentchat.New(st, &scripted{release: release}, agentchat.WithRunLease(lease))
	_, err := live.Start(ctx)
	require.NoError(t, err)
	t.Cleanup(live.Close)
	c, err := live.Create(ctx, agentchat.NewConversation{Title: "live"})
	require.NoError(t, err)
	_, err = live.Send(ctx, c.ID, "work")
	require.NoError(t, err)
	waitStatus(t, live, c.ID, agentchat.StatusRunning)

	// Leftovers of a process that stopped: one without a lease, one whose
	// lease runs a little longer.
	leftover := func(title string, until time.Time) string {
		t.Helper()
		l, err := live.Create(ctx, agentchat.NewConversation{Title: title})
		require.NoError(t, err)
		require.NoError(t, st.UpdateConversation(ctx, agentchat.ConversationUpdate{ID: l.ID, Status: agentchat.StatusRunning, At: time.Now().UTC(), LeaseUntil: until}))
		return l.ID
	}
	gone := leftover("gone", time.Time{})
	fading := leftover("fading", time.Now().Add(3*lease))

	next := agentchat.New(st, &scripted{}, agentchat.WithRunLease(lease))
	n, err := next.Start(ctx)
	require.NoError(t, err)
	t.Cleanup(next.Close)
	require.Equal(t, 1, n, "only the leftover without a lease")
	waitStatus(t, next, gone, agentchat.StatusInterrupted)
	waitStatus(t, next, fading, agentchat.StatusInterrupted)
	for _, id := range []string{gone, fading} {
		// The status is stored before the closing event is appended: wait
		// for the event.
		require.Eventually(t, func() bool {
			_, msgs, err := next.Conversation(ctx, id)
			require.NoError(t, err)
			if len(msgs) == 0 {
				return false
			}
			last := msgs[len(msgs)-1]
			return last.Type == agentchat.EventStatus && last.Content == `{"status":"interrupted"}`
		}, 5*time.Second, 5*time.Millisecond, "the stream ends with the run's closing status")
	}

	time.Sleep(5 * lease)
	got, _, err := next.Conversation(ctx, c.ID)
	require.NoError(t, err)
	require.Equal(t, agentchat.StatusRunning, got.Status, "the live run outlives five leases")
	close(release)
	waitStatus(t, live, c.ID, agentchat.StatusIdle)
}
