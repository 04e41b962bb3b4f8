package agentchat

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/agorahq/agora/internal/ids"
	"github.com/agorahq/agora/internal/notify"
	"github.com/agorahq/agora/internal/text"
	"github.com/agorahq/agora/store"
)

// Service keeps conversations and runs the agent for their messages: one
// run at a time (the runner works in one directory); messages to other
// conversations wait in a FIFO queue, or are refused with WithRejectWhenBusy.
// Every event is stored before it is announced, so a client that lost its
// stream reads the whole conversation back from the store.
//
// The queue lives in this process: run one Service per working directory.
type Service struct {
	store    Store
	runner   Runner
	notifier store.Notifier
	now      func() time.Time
	ids      ids.Gen
	reject   bool
	obs      Observer
	lease    time.Duration // how long a run or queued message is vouched for

	base     context.Context
	stop     context.CancelFunc
	wg       sync.WaitGroup
	mu       sync.Mutex
	active   string             // the conversation running, "" for none
	cancelFn context.CancelFunc // stops the active run
	queue    []queued
	recheck  chan struct{} // asks keepLeases to renew now, not at its next tick
}

type queued struct {
	conversationID, text string
	trace                trace.SpanContext // the sender's, carried into the run
}

// Option configures a Service.
type Option func(*Service)

// WithClock sets the clock; the default is time.Now.
func WithClock(now func() time.Time) Option { return func(s *Service) { s.now = now } }

// clock is the time the Service stamps: the millisecond in UTC, as every
// backend keeps it, so that every backend orders and returns the same.
func (s *Service) clock() time.Time { return store.Milli(s.now()) }

// WithNotifier announces every stored message on n (topic topic(id)).
func WithNotifier(n store.Notifier) Option {
	return func(s *Service) { s.notifier = notify.ForService(n) }
}

// DefaultRunLease is how long a Service vouches for the conversations it
// runs or queues before it renews them (every third of it): a process
// that stops renewing, having stopped, leaves them to be interrupted by
// the next Start or sweep of any process sharing the store.
const DefaultRunLease = 30 * time.Second

// WithRunLease sets the run lease (DefaultRunLease); a process paused
// longer than it may have its runs taken for stopped.
func WithRunLease(d time.Duration) Option { return func(s *Service) { s.lease = d } }

// WithRejectWhenBusy refuses a message to another conversation while one
// runs, instead of queueing it.
func WithRejectWhenBusy() Option { return func(s *Service) { s.reject = true } }

// New returns a Service. Call Start before use and Close when done.
func New(st Store, runner Runner, opts ...Option) *Service {
	s := &Service{store: st, runner: runner, now: time.Now, notifier: notify.Local(), obs: nopObserver{}, lease: DefaultRunLease}
	for _, o := range opts {
		o(s)
	}
	s.ids.Now = s.now
	s.recheck = make(chan struct{}, 1)
	s.base, s.stop = context.WithCancel(context.Background())
	return s
}

// cancelTopic carries cancels between processes: the payload is the
// conversation whose run (wherever it is) should stop. It only hastens
// them: each is stored first (Store.RequestCancel), and the process that
// runs the conversation finds it when it renews its lease.
const cancelTopic = "agentchat:cancel"

// Start marks the runs a stopped process left running or queued as
// interrupted (those whose lease has ended: a live process's are spared)
// and returns how many; with a notifier shared with other processes, it
// starts listening for the cancels they send, and renews at once when the
// notifier says it lost some (it reconnected). Until Close it renews the
// leases of this process's runs, stopping those whose cancel another
// process requested, and interrupts those other processes stopped
// renewing.
func (s *Service) Start(ctx context.Context) (_ int, err error) {
	ctx, done := s.obs.Call(ctx, "agentchat.Start")
	defer func() { done(err) }()
	if !notify.IsLocal(s.notifier) {
		sub, err := s.notifier.Subscribe(s.base, cancelTopic)
		if err != nil {
			return 0, err
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			for id := range sub.C {
				if len(id) > 0 {
					s.cancelLocal(context.WithoutCancel(ctx), string(id))
					continue
				}
				// An empty event says the notifier reconnected: cancels
				// sent meanwhile were lost, but not the requests they
				// carried, which the renewal reads.
				select {
				case s.recheck <- struct{}{}:
				default: // a renewal is already due
				}
			}
		}()
	}
	n, err := s.interruptLapsed(ctx)
	if err != nil {
		return 0, err
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.keepLeases()
	}()
	return n, nil
}

// interruptLapsed interrupts the runs whose lease has ended and ends each
// one's stream with its closing status.
func (s *Service) interruptLapsed(ctx context.Context) (int, error) {
	ids, err := s.store.InterruptRunning(ctx, s.clock())
	for _, id := range ids {
		_, _ = s.append(ctx, id, EventStatus, closingStatus(StatusInterrupted))
	}
	return len(ids), err
}

// keepLeases renews the leases of this process's running and queued
// conversations every third of the lease, and at once when the cancel
// subscription asks (recheck), and interrupts the lapsed runs of the
// processes sharing the store every third of the lease, until Close.
func (s *Service) keepLeases() {
	tick := time.NewTicker(max(s.lease/3, time.Millisecond))
	defer tick.Stop()
	ctx := s.base
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.recheck:
			s.renew(ctx)
			continue
		case <-tick.C:
		}
		s.renew(ctx)
		_, _ = s.interruptLapsed(ctx)
	}
}

// renew renews the leases of this process's running and queued
// conversations and stops those whose cancel another process requested:
// a cancel reaches its run here even when the notifier lost its message.
func (s *Service) renew(ctx context.Context) {
	s.mu.Lock()
	mine := make([]string, 0, len(s.queue)+1)
	if s.active != "" {
		mine = append(mine, s.active)
	}
	for _, q := range s.queue {
		mine = append(mine, q.conversationID)
	}
	s.mu.Unlock()
	if len(mine) == 0 {
		return
	}
	cancels, _ := s.store.RenewConversations(ctx, mine, s.leaseUntil())
	for _, id := range cancels {
		// Without ctx's cancel: a queued run taken out is stored
		// cancelled even if Close has begun.
		s.cancelLocal(context.WithoutCancel(ctx), id)
	}
}

// leaseUntil is the lease of a run or queued message starting now.
func (s *Service) leaseUntil() time.Time { return s.clock().Add(s.lease) }

// Close stops the running agent and waits for it. As the process stops,
// its runs end interrupted: the one running, and those queued, which will
// not start; each gets its closing status event, so no conversation is
// left running or queued for the processes sharing the store.
func (s *Service) Close() {
	s.stop()
	s.wg.Wait()
	s.mu.Lock()
	queue := s.queue
	s.queue = nil
	s.mu.Unlock()
	ctx := context.WithoutCancel(s.base)
	for _, q := range queue {
		if s.store.UpdateConversation(ctx, ConversationUpdate{ID: q.conversationID, Status: StatusInterrupted, At: s.clock()}) == nil {
			_, _ = s.append(ctx, q.conversationID, EventStatus, closingStatus(StatusInterrupted))
		}
	}
}

// topic is the notifier topic of a conversation; events carry the ID of
// the stored message.
func topic(conversationID string) string { return "agentchat:" + conversationID }

// ErrBusy is what Send returns for a message to a conversation whose
// agent is running or queued (or, with WithRejectWhenBusy, to any while
// another conversation's agent runs), and Delete for a conversation whose
// agent is running or queued. Cancel's error for a conversation with no
// run is ErrNotRunning.
var ErrBusy = &store.Error{Kind: store.ErrConflict, Code: "agent_busy", Message: "the agent is working on this conversation; the message is stored and will not start a run"}

// MaxMessageLen bounds a user message.
const MaxMessageLen = 100_000

// NewConversation is the input of Create.
type NewConversation struct {
	// Title is the conversation's title; empty takes the first message's
	// (or the agent's [[TITLE: …]]).
	Title string
	// User is who starts it, if known.
	User string
}

// MaxTitleLen bounds a conversation's title and its user's name.
const MaxTitleLen = 200

// Create starts a conversation.
func (s *Service) Create(ctx context.Context, in NewConversation) (_ Conversation, err error) {
	ctx, done := s.obs.Call(ctx, "agentchat.Create")
	defer func() { done(err) }()
	title, err := text.Trimmed("title", in.Title, false, MaxTitleLen)
	if err != nil {
		return Conversation{}, err
	}
	user, err := text.Trimmed("user", in.User, false, MaxTitleLen)
	if err != nil {
		return Conversation{}, err
	}
	now := s.clock()
	c := Conversation{ID: s.ids.New("conv"), Title: title, User: user, Status: StatusIdle, CreatedAt: now, UpdatedAt: now}
	return c, s.store.CreateConversation(ctx, c)
}

// Conversation returns a conversation with its messages.
func (s *Service) Conversation(ctx context.Context, id string) (_ Conversation, _ []Message, err error) {
	ctx, done := s.obs.Call(ctx, "agentchat.Conversation")
	defer func() { done(err) }()
	c, err := s.store.GetConversation(ctx, id)
	if err != nil {
		return Conversation{}, nil, err
	}
	ms, err := s.store.ListChatMessages(ctx, id, 0)
	return c, ms, err
}

// Get returns a conversation without its messages.
func (s *Service) Get(ctx context.Context, id string) (_ Conversation, err error) {
	ctx, done := s.obs.Call(ctx, "agentchat.Get")
	defer func() { done(err) }()
	return s.store.GetConversation(ctx, id)
}

// Limits of one page of Conversations.
const (
	DefaultConversationsLimit = 100
	MaxConversationsLimit     = 500
)

// maxIDLen bounds an ID a caller passes: every ID the service makes is
// far shorter.
const maxIDLen = 200

// ConversationsQuery pages Conversations.
type ConversationsQuery struct {
	Limit  int    // 1 to MaxConversationsLimit; 0 means DefaultConversationsLimit
	Before string // the last conversation of the previous page; "" for the first
}

// Conversations lists a page of conversations, most recently updated
// first. A page shorter than its limit is the last; the next one starts
// after the last conversation of this one (a conversation updated in
// between moves to the top, and may be seen twice).
func (s *Service) Conversations(ctx context.Context, q ConversationsQuery) (_ []Conversation, err error) {
	ctx, done := s.obs.Call(ctx, "agentchat.Conversations")
	defer func() { done(err) }()
	if q.Limit == 0 {
		q.Limit = DefaultConversationsLimit
	}
	if q.Limit < 1 || q.Limit > MaxConversationsLimit {
		return nil, store.Errorf(store.ErrInvalid, "invalid_limit", "limit must be from 1 to %d", MaxConversationsLimit)
	}
	if err := text.Check("before", q.Before, false, maxIDLen); err != nil {
		return nil, err
	}
	cs, err := s.store.ListConversations(ctx, ListConversationsParams{Limit: q.Limit, Before: q.Before})
	if errors.Is(err, ErrConversationNotFound) {
		return nil, store.Errorf(store.ErrInvalid, "invalid_before", "before names no conversation")
	}
	return cs, err
}

// Messages returns a conversation's messages after the given ID.
func (s *Service) Messages(ctx context.Context, id string, after int64) (_ []Message, err error) {
	ctx, done := s.obs.Call(ctx, "agentchat.Messages")
	defer func() { done(err) }()
	return s.store.ListChatMessages(ctx, id, after)
}

// Subscribe follows a conversation's new messages.
func (s *Service) Subscribe(ctx context.Context, id string) (_ *store.Subscription, err error) {
	ctx, done := s.obs.Call(ctx, "agentchat.Subscribe")
	defer func() { done(err) }()
	return s.notifier.Subscribe(ctx, topic(id))
}

func (s *Service) append(ctx context.Context, id string, typ EventType, content string) (Message, error) {
	m, err := s.store.AppendChatMessage(ctx, Message{ConversationID: id, Type: typ, Content: content, CreatedAt: s.clock()})
	if err == nil && !notify.Quiet(s.notifier) {
		_ = s.notifier.Publish(context.WithoutCancel(ctx), topic(id), []byte(strconv.FormatInt(m.ID, 10)))
	}
	return m, err
}

// SendResult says what became of a message.
type SendResult struct {
	Message Message `json:"message"` // the user's message as stored
	Queued  bool    `json:"queued"`  // the run waits behind another conversation's
}

// Send stores the user's message and starts the agent on it — or queues it
// behind another conversation's run. A message to a conversation whose
// agent is running or queued is stored and answered ErrBusy.
func (s *Service) Send(ctx context.Context, id, content string) (_ SendResult, err error) {
	ctx, done := s.obs.Call(ctx, "agentchat.Send")
	defer func() { done(err) }()
	if err := text.Check("content", content, true, MaxMessageLen); err != nil {
		return SendResult{}, err
	}
	// The message is stored under the lock that ends runs too, so it is
	// stored after the closing status of a run it did not catch (and
	// answered ErrBusy only while that run is still going).
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.store.GetConversation(ctx, id)
	if err != nil {
		return SendResult{}, err
	}
	m, err := s.append(ctx, id, EventUser, content)
	if err != nil {
		return SendResult{}, err
	}
	if c.Title == "" {
		title := strings.TrimSpace(content)
		if r := []rune(title); len(r) > 60 {
			title = string(r[:60]) + "…"
		}
		_ = s.store.UpdateConversation(ctx, ConversationUpdate{ID: id, Status: c.Status, SessionID: "", Title: title, At: s.clock()})
	}
	if s.active == id || slices.ContainsFunc(s.queue, func(q queued) bool { return q.conversationID == id }) {
		return SendResult{Message: m}, ErrBusy
	}
	if s.active != "" {
		if s.reject {
			return SendResult{Message: m}, ErrBusy
		}
		s.queue = append(s.queue, queued{id, content, trace.SpanContextFromContext(ctx)})
		return SendResult{Message: m, Queued: true}, s.store.UpdateConversation(ctx, ConversationUpdate{ID: id, Status: StatusQueued, SessionID: "", Title: "", At: s.clock(), LeaseUntil: s.leaseUntil()})
	}
	return SendResult{Message: m}, s.startLocked(id, content, trace.SpanContextFromContext(ctx))
}

// startLocked starts a run; s.mu is held. The run's context carries sc,
// the sender's trace, so the runner can pass it on (the run outlives the
// request, so it cannot take the request's context).
func (s *Service) startLocked(id, text string, sc trace.SpanContext) error {
	base := s.base
	if sc.IsValid() {
		base = trace.ContextWithRemoteSpanContext(base, sc)
	}
	ctx, cancel := context.WithCancel(base)
	if err := s.store.UpdateConversation(ctx, ConversationUpdate{ID: id, Status: StatusRunning, SessionID: "", Title: "", At: s.clock(), LeaseUntil: s.leaseUntil()}); err != nil {
		cancel()
		return err
	}
	s.active, s.cancelFn = id, cancel
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer cancel()
		status, session := s.run(ctx, id, text)
		s.mu.Lock()
		defer s.mu.Unlock()
		// How the run ended is stored under the lock Send takes, so no
		// message is stored between the run's end and its status event.
		bg := context.WithoutCancel(ctx)
		_ = s.store.UpdateConversation(bg, ConversationUpdate{ID: id, Status: status, SessionID: session, Title: "", At: s.clock()})
		// The run ends with a status event, stored like the rest, so a
		// stream (live or replayed) always tells how the run ended. It is
		// stored after the conversation's status, so a page that re-reads
		// the conversation on that event sees the run ended.
		_, _ = s.append(bg, id, EventStatus, closingStatus(status))
		s.active, s.cancelFn = "", nil
		for len(s.queue) > 0 && s.base.Err() == nil {
			next := s.queue[0]
			s.queue = s.queue[1:]
			if s.startLocked(next.conversationID, next.text, next.trace) == nil {
				return
			}
		}
	}()
	return nil
}

// run runs the agent for one message and returns how it ended and the
// session to resume.
func (s *Service) run(ctx context.Context, id, text string) (Status, string) {
	bg := context.WithoutCancel(ctx) // storing goes on after a cancel
	// A conversation deleted under the run (by a process that took it for
	// stopped) stops the agent: nothing it does could be stored.
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	keep := func(typ EventType, content string) {
		if _, err := s.append(bg, id, typ, content); errors.Is(err, ErrConversationNotFound) {
			stop()
		}
	}
	c, err := s.store.GetConversation(bg, id)
	if err != nil {
		return StatusError, ""
	}
	history := s.history(bg, id)
	failed := false
	var titles titleFilter
	setTitle := func(title string) {
		if title != "" {
			_ = s.store.UpdateConversation(bg, ConversationUpdate{ID: id, Status: StatusRunning, SessionID: "", Title: title, At: s.clock()})
		}
	}
	flush := func() {
		if held := titles.Flush(); held != "" {
			keep(EventAssistant, held)
		}
	}
	res, err := s.runner.Run(ctx, RunRequest{Message: text, SessionID: c.SessionID, History: history, OnEvent: func(e Event) {
		// Assistant text is stored as text, without the agent's title
		// markers; every other event as its JSON.
		content := e.Content
		if e.Type == EventAssistant {
			var title string
			content, title = titles.Feed(content)
			setTitle(title)
			if content == "" {
				return
			}
		} else {
			flush()
		}
		switch e.Type {
		case EventAssistant:
		case EventDone:
			if result, title, ok := stripTitles(e.Result); ok {
				e.Result = strings.TrimSpace(result)
				setTitle(title)
			}
			e.ConversationID = id
			content = string(e.Data())
		case EventError:
			failed = true
			content = string(e.Data())
		default:
			content = string(e.Data())
		}
		keep(e.Type, content)
	}})
	flush()
	status := StatusIdle
	switch {
	case ctx.Err() != nil && s.base.Err() != nil:
		// Close stopped it: the process is stopping, nobody cancelled.
		status = StatusInterrupted
		_, _ = s.append(bg, id, EventSystem, string(Event{Content: "interrupted"}.Data()))
	case ctx.Err() != nil:
		status = StatusCancelled
		_, _ = s.append(bg, id, EventSystem, string(Event{Content: "cancelled"}.Data()))
	case err != nil:
		status = StatusError
		_, _ = s.append(bg, id, EventError, string(Event{Content: err.Error()}.Data()))
	case failed:
		status = StatusError
	}
	return status, res.SessionID
}

// history rebuilds the conversation's turns for a run that cannot resume.
func (s *Service) history(ctx context.Context, id string) []Turn {
	ms, err := s.store.ListChatMessages(ctx, id, 0)
	if err != nil || len(ms) == 0 {
		return nil
	}
	var turns []Turn
	for _, m := range ms[:len(ms)-1] { // the last is the message being sent
		switch m.Type {
		case EventUser:
			turns = append(turns, Turn{Role: "user", Content: m.Content})
		case EventAssistant:
			turns = append(turns, Turn{Role: "assistant", Content: m.Content})
		}
	}
	return turns
}

// Cancel stops the conversation's running agent, or takes it out of the
// queue, in this process or in another sharing the store: ErrNotRunning
// when it is neither running nor queued, ErrConversationNotFound when
// there is no such conversation. A run elsewhere is asked to stop through
// the store (Store.RequestCancel), where its process finds the request
// when it next renews its lease (within a third of the lease), and
// through the notifier, which makes it stop at once; a notifier that
// loses the message, or fails to send it, only delays the stop.
func (s *Service) Cancel(ctx context.Context, id string) (err error) {
	ctx, done := s.obs.Call(ctx, "agentchat.Cancel")
	defer func() { done(err) }()
	if s.cancelLocal(ctx, id) {
		return nil
	}
	// Not here: the run may belong to another process sharing the store.
	// The store checks that it is running or queued in the step that
	// records the request.
	if err := s.store.RequestCancel(ctx, id); err != nil {
		return err
	}
	if !notify.IsLocal(s.notifier) {
		_ = s.notifier.Publish(ctx, cancelTopic, []byte(id)) // the request is stored: the message only hastens it
	}
	return nil
}

// cancelLocal stops the conversation's run or takes it out of the queue,
// if this process has it; it reports whether it did.
func (s *Service) cancelLocal(ctx context.Context, id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id != "" && s.active == id {
		s.cancelFn()
		return true
	}
	if i := slices.IndexFunc(s.queue, func(q queued) bool { return q.conversationID == id }); i >= 0 {
		s.queue = slices.Delete(s.queue, i, i+1)
		_ = s.store.UpdateConversation(ctx, ConversationUpdate{ID: id, Status: StatusCancelled, SessionID: "", Title: "", At: s.clock()})
		// A stream waiting for the queued run learns it will not come.
		_, _ = s.append(context.WithoutCancel(ctx), id, EventStatus, closingStatus(StatusCancelled))
		return true
	}
	return false
}

// Delete removes a conversation whose agent is not running or queued, in
// this process or another sharing the store (ErrBusy). It holds the lock
// Send starts runs under, and the store refuses a busy conversation in
// the step that deletes, so no run starts on a conversation being deleted.
func (s *Service) Delete(ctx context.Context, id string) (err error) {
	ctx, done := s.obs.Call(ctx, "agentchat.Delete")
	defer func() { done(err) }()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active == id || slices.ContainsFunc(s.queue, func(q queued) bool { return q.conversationID == id }) {
		return ErrBusy
	}
	err = s.store.DeleteConversation(ctx, id)
	if errors.Is(err, ErrConversationBusy) {
		return ErrBusy
	}
	return err
}

// Running reports the conversation being run, if any.
func (s *Service) Running() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.active
}
