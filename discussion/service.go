package discussion

import (
	"context"
	"strings"
	"time"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/internal/ids"
	"github.com/agorahq/agora/internal/notify"
	"github.com/agorahq/agora/internal/sweep"
	"github.com/agorahq/agora/internal/text"
	"github.com/agorahq/agora/store"
)

// Service holds the rules of discussion prompts over a Store. Several
// Services in several processes may share one backend; with a shared
// Notifier their long polls wake each other.
type Service struct {
	store    Store
	notifier store.Notifier
	now      func() time.Time
	ids      ids.Gen
	obs      Observer
}

// Option configures a Service.
type Option func(*Service)

// WithClock sets the clock; the default is time.Now.
func WithClock(now func() time.Time) Option { return func(s *Service) { s.now = now } }

// WithNotifier makes changes wake Wait callers in every process sharing n.
// Without one, changes wake this process's callers only, and Wait re-reads
// the prompt every second for the rest. Changes are announced in the
// background.
func WithNotifier(n store.Notifier) Option {
	return func(s *Service) { s.notifier = notify.ForService(n) }
}

// New returns a Service over st.
func New(st Store, opts ...Option) *Service {
	s := &Service{store: st, now: time.Now, notifier: notify.Local(), obs: nopObserver{}}
	for _, o := range opts {
		o(s)
	}
	s.ids.Now = s.now
	return s
}

// nowMs is the clock at millisecond precision in UTC, the precision every
// backend keeps, so a prompt reads back exactly as it was written.
func (s *Service) nowMs() time.Time { return store.Milli(s.now()) }

func topic(id string) string { return "discussion:" + id }

func (s *Service) changed(ctx context.Context, id string) {
	if notify.Quiet(s.notifier) {
		return
	}
	// A lost hint only delays a waiter until its next re-read.
	_ = s.notifier.Publish(context.WithoutCancel(ctx), topic(id), nil)
	_ = s.notifier.Publish(context.WithoutCancel(ctx), squadTopic, []byte(id))
}

// squadTopic carries a hint for every change of the squad chat or of any
// prompt (the payload is the prompt ID, or "chat"): what a live squad view
// follows.
const squadTopic = "discussion:squad"

// SubscribeSquad follows every change of the squad chat.
func (s *Service) SubscribeSquad(ctx context.Context) (_ *store.Subscription, err error) {
	ctx, done := s.obs.Call(ctx, "discussion.SubscribeSquad")
	defer func() { done(err) }()
	return s.notifier.Subscribe(ctx, squadTopic)
}

func invalid(code, format string, args ...any) error {
	return store.Errorf(store.ErrInvalid, code, format, args...)
}

// NewPrompt is the input of Create. Nil numbers take their defaults.
type NewPrompt struct {
	// TaskID names the task the prompt is about; nil or blank is none.
	TaskID *string
	// RequesterAgent is the asker's name; with a key it must be blank or
	// the key's name.
	RequesterAgent string
	// PromptMessage is the question; it is trimmed and must not be blank.
	PromptMessage string
	// RequiredResponses is 1 to MaxRequired; nil means DefaultRequired.
	RequiredResponses *int
	// TimeoutMinutes is 1 to MaxTimeoutMinutes; nil means
	// DefaultTimeoutMinutes.
	TimeoutMinutes *int
}

// speaker is the name the caller (identity.FromContext) speaks under, named
// being the name field's value, and whether it may speak as a human. A
// caller no key authenticated speaks under the name it gives. A key speaks
// under its own name: a blank name takes it, another name is ErrForbidden
// ("not_your_name"); and speaking as a human needs ScopeAdmin.
func speaker(ctx context.Context, field, named string, human bool) (string, error) {
	c := identity.FromContext(ctx)
	if !c.Keyed() {
		return named, nil
	}
	k := c.Key
	if n := strings.TrimSpace(named); n != "" && n != k.Name {
		return "", store.Errorf(store.ErrForbidden, "not_your_name", "this API key acts as %q; %s %q names someone else", k.Name, field, n)
	}
	if human {
		if err := k.Require(ScopeAdmin); err != nil {
			return "", err
		}
	}
	return k.Name, nil
}

// Create stores a collecting prompt and its squad-chat message. The
// requester is the caller (see speaker); when a key authenticated it the
// prompt remembers the key (Prompt.RequesterKey), so that only it, or a key
// with ScopeAdmin, resolves or cancels the prompt (Close).
func (s *Service) Create(ctx context.Context, in NewPrompt) (_ Prompt, _ Message, err error) {
	ctx, done := s.obs.Call(ctx, "discussion.Create")
	defer func() { done(err) }()
	named, err := speaker(ctx, "requester_agent", in.RequesterAgent, false)
	if err != nil {
		return Prompt{}, Message{}, err
	}
	requester, err := text.Trimmed("requester_agent", named, true, MaxAgentNameLen)
	if err != nil {
		return Prompt{}, Message{}, err
	}
	text, err := text.Trimmed("prompt_message", in.PromptMessage, true, MaxPromptLen)
	if err != nil {
		return Prompt{}, Message{}, err
	}
	required := DefaultRequired
	if in.RequiredResponses != nil {
		required = *in.RequiredResponses
	}
	if required < 1 || required > MaxRequired {
		return Prompt{}, Message{}, invalid("invalid_required_responses", "required_responses must be an integer from 1 to %d", MaxRequired)
	}
	timeout := DefaultTimeoutMinutes
	if in.TimeoutMinutes != nil {
		timeout = *in.TimeoutMinutes
	}
	if timeout < 1 || timeout > MaxTimeoutMinutes {
		return Prompt{}, Message{}, invalid("invalid_timeout_minutes", "timeout_minutes must be an integer from 1 to %d", MaxTimeoutMinutes)
	}
	taskID, err := optionalText("task_id", in.TaskID, MaxTaskIDLen)
	if err != nil {
		return Prompt{}, Message{}, err
	}
	now := s.nowMs()
	p := Prompt{
		ID:                s.ids.New("prompt"),
		TaskID:            taskID,
		RequesterAgent:    requester,
		PromptMessage:     text,
		RequiredResponses: required,
		TimeoutMinutes:    timeout,
		Status:            StatusCollecting,
		CollectedContext:  []ContextEntry{},
		CreatedAt:         now,
		RequesterKey:      identity.FromContext(ctx).Key.ID,
	}
	m := Message{
		ID:                 s.ids.New("msg"),
		AgentName:          requester,
		Message:            text,
		MessageType:        TypeDiscussionPrompt,
		DiscussionPromptID: &p.ID,
		TaskRef:            taskID,
		CreatedAt:          now,
	}
	p.SquadChatID = m.ID
	if err := s.store.CreatePrompt(ctx, p, m); err != nil {
		return Prompt{}, Message{}, err
	}
	s.changed(ctx, p.ID)
	return p, m, nil
}

// Get returns a prompt as it stands now (an overdue prompt is timed out).
func (s *Service) Get(ctx context.Context, id string) (_ Prompt, err error) {
	ctx, done := s.obs.Call(ctx, "discussion.Get")
	defer func() { done(err) }()
	p, err := s.store.GetPrompt(ctx, id)
	if err != nil {
		return Prompt{}, err
	}
	return p.AsOf(s.now()), nil
}

// Responses returns the squad-chat responses to a prompt, oldest first.
func (s *Service) Responses(ctx context.Context, id string) (_ []Message, err error) {
	ctx, done := s.obs.Call(ctx, "discussion.Responses")
	defer func() { done(err) }()
	return s.store.ListResponses(ctx, id)
}

// Listing limits.
const (
	DefaultListLimit = 100
	MaxListLimit     = 500
)

// ListQuery filters List. Empty Statuses means pending and collecting.
type ListQuery struct {
	Statuses []Status // as they stand now, an overdue prompt timed out
	Agent    string   // when set, only prompts that agent could answer (ListParams.Agent); trimmed, as names are stored
	TaskID   string   // when set, only prompts of that task; trimmed, as task IDs are stored
	Limit    int      // 0 means DefaultListLimit
}

// List returns prompts newest first, with statuses as they stand now.
func (s *Service) List(ctx context.Context, q ListQuery) (_ []Prompt, err error) {
	ctx, done := s.obs.Call(ctx, "discussion.List")
	defer func() { done(err) }()
	want := q.Statuses
	if len(want) == 0 {
		want = []Status{StatusPending, StatusCollecting}
	}
	for _, st := range want {
		if !st.Valid() {
			return nil, invalid("invalid_status", "status %q is not one of pending, collecting, resolved, timed_out, cancelled", st)
		}
	}
	limit := q.Limit
	if limit == 0 {
		limit = DefaultListLimit
	}
	if limit < 1 || limit > MaxListLimit {
		return nil, invalid("invalid_limit", "limit must be from 1 to %d", MaxListLimit)
	}
	now := s.now()
	// The filters are compared with names and task IDs as Create and
	// Respond store them: trimmed.
	agent, task := strings.TrimSpace(q.Agent), strings.TrimSpace(q.TaskID)
	page, err := s.store.ListPrompts(ctx, ListParams{Statuses: want, Agent: agent, TaskID: task, Limit: limit, Now: now})
	if err != nil {
		return nil, err
	}
	for i := range page {
		page[i] = page[i].AsOf(now)
	}
	return page, nil
}

// Response is the input of Respond.
type Response struct {
	AgentName string // the responder's name; with a key, blank or the key's name
	Message   string // the answer; trimmed, it must not be blank
	IsHuman   bool   // a human answers; a key needs ScopeAdmin for it
}

// Respond adds the caller's answer (see speaker) to a prompt and returns the
// prompt after it with the answer's squad-chat message; the answer that
// reaches the required count resolves the prompt.
func (s *Service) Respond(ctx context.Context, id string, in Response) (_ Prompt, _ Message, err error) {
	ctx, done := s.obs.Call(ctx, "discussion.Respond")
	defer func() { done(err) }()
	named, err := speaker(ctx, "agent_name", in.AgentName, in.IsHuman)
	if err != nil {
		return Prompt{}, Message{}, err
	}
	agent, err := text.Trimmed("agent_name", named, true, MaxAgentNameLen)
	if err != nil {
		return Prompt{}, Message{}, err
	}
	text, err := text.Trimmed("message", in.Message, true, MaxMessageLen)
	if err != nil {
		return Prompt{}, Message{}, err
	}
	now := s.nowMs()
	m := Message{
		ID: s.ids.New("msg"), AgentName: agent, Message: text, IsHuman: in.IsHuman,
		MessageType: TypeDiscussionResponse, DiscussionPromptID: &id, CreatedAt: now,
	}
	p, err := s.store.Respond(ctx, RespondParams{
		PromptID: id,
		Entry:    ContextEntry{Agent: agent, Message: text, IsHuman: in.IsHuman, CreatedAt: now},
		Message:  m,
	})
	if err != nil {
		return Prompt{}, Message{}, err
	}
	s.changed(ctx, id)
	return p, m, nil
}

// Action is what a human does to an open prompt.
type Action string

// The actions of PATCH /api/discussion/{id}.
const (
	ActionResolve Action = "resolve"
	ActionCancel  Action = "cancel"
)

// MayClose reports whether the caller (identity.FromContext) may resolve or
// cancel p: any caller no key authenticated (the original's open routes),
// a key with ScopeAdmin, or the key that asked p. A prompt asked without a
// key is then nobody's: only a key with ScopeAdmin closes it.
func MayClose(ctx context.Context, p Prompt) bool {
	c := identity.FromContext(ctx)
	return !c.Keyed() || c.Key.Has(ScopeAdmin) || (p.RequesterKey != "" && c.Key.ID == p.RequesterKey)
}

// Close resolves or cancels an open prompt when the caller may (MayClose),
// else returns ErrNotRequester and changes nothing. The requester's key
// never changes once the prompt is stored, so reading it first and closing
// second cannot let another caller in between.
func (s *Service) Close(ctx context.Context, id string, a Action) (_ Prompt, err error) {
	ctx, done := s.obs.Call(ctx, "discussion.Close")
	defer func() { done(err) }()
	// Who may close it before what they asked: a caller without the
	// right learns nothing from which actions are valid.
	if c := identity.FromContext(ctx); c.Keyed() && !c.Key.Has(ScopeAdmin) {
		p, err := s.store.GetPrompt(ctx, id)
		if err != nil {
			return Prompt{}, err
		}
		if !MayClose(ctx, p) {
			return Prompt{}, ErrNotRequester
		}
	}
	to, err := closedStatus(a)
	if err != nil {
		return Prompt{}, err
	}
	p, err := s.store.ClosePrompt(ctx, id, to, s.nowMs())
	if err != nil {
		return Prompt{}, err
	}
	s.changed(ctx, id)
	return p, nil
}

// closedStatus is the status action a leads to.
func closedStatus(a Action) (Status, error) {
	var to Status
	switch a {
	case ActionResolve:
		to = StatusResolved
	case ActionCancel:
		to = StatusCancelled
	default:
		return "", invalid("invalid_action", "action must be resolve or cancel")
	}
	return to, nil
}

// Sweep records the timeout of every overdue prompt and returns how many it
// timed out. Concurrent sweeps time each prompt out once.
func (s *Service) Sweep(ctx context.Context) (_ int, err error) {
	ctx, done := s.obs.Call(ctx, "discussion.Sweep")
	defer func() { done(err) }()
	ids, err := s.store.TimeOut(ctx, s.now())
	for _, id := range ids {
		s.changed(ctx, id)
	}
	return len(ids), err
}

// RunSweeper calls Sweep every interval until ctx is done, passing errors to
// onErr when it is not nil.
func (s *Service) RunSweeper(ctx context.Context, interval time.Duration, onErr func(error)) {
	sweep.Every(ctx, interval, func(ctx context.Context) error {
		_, err := s.Sweep(ctx)
		return err
	}, onErr)
}

// MaxWait bounds Wait.
const MaxWait = 60 * time.Second

// Wait returns the prompt as soon as it is ready or final, or as it stands
// after d (at most MaxWait), whichever comes first.
func (s *Service) Wait(ctx context.Context, id string, d time.Duration) (_ Prompt, err error) {
	ctx, done := s.obs.Call(ctx, "discussion.Wait")
	defer func() { done(err) }()
	d = min(d, MaxWait)
	var events <-chan []byte
	var poll time.Duration
	if d > 0 {
		defer s.obs.LongPoll(ctx)()
		sub, err := s.notifier.Subscribe(ctx, topic(id))
		if err != nil {
			return Prompt{}, err
		}
		defer sub.Close()
		events, poll = sub.C, sub.Poll()
	}
	end := time.NewTimer(d)
	defer end.Stop()
	for {
		// Subscribed first, read second: a change between the two still
		// wakes us.
		p, err := s.Get(ctx, id)
		if err != nil || p.Final() || d <= 0 {
			return p, err
		}
		// Wake just past the deadline too: the prompt times out then (at
		// the deadline itself it is still open; the stores keep
		// milliseconds).
		wake := time.NewTimer(min(poll, max(0, p.Deadline().Add(time.Millisecond).Sub(s.now()))))
		select {
		case <-ctx.Done():
			wake.Stop()
			return Prompt{}, ctx.Err()
		case <-end.C:
			wake.Stop()
			return s.Get(ctx, id)
		case _, ok := <-events:
			if !ok {
				events = nil
			}
		case <-wake.C:
		}
		wake.Stop()
	}
}

// Post is a plain squad-chat message, the input of PostMessage.
type Post struct {
	AgentName string // the poster's name; with a key, blank or the key's name
	Message   string // the text; trimmed, it must not be blank
	IsHuman   bool   // a human posts; a key needs ScopeAdmin for it
	// TaskRef, when set, names the task the message is about.
	TaskRef *string
	// ReplyToID, when set, is the ID of the squad-chat message this one
	// answers; it must exist.
	ReplyToID *string
}

// PostMessage posts the caller's (see speaker) plain squad-chat message, a
// reply when in.ReplyToID is set.
func (s *Service) PostMessage(ctx context.Context, in Post) (_ Message, err error) {
	ctx, done := s.obs.Call(ctx, "discussion.PostMessage")
	defer func() { done(err) }()
	named, err := speaker(ctx, "agent_name", in.AgentName, in.IsHuman)
	if err != nil {
		return Message{}, err
	}
	agent, err := text.Trimmed("agent_name", named, true, MaxAgentNameLen)
	if err != nil {
		return Message{}, err
	}
	text, err := text.Trimmed("message", in.Message, true, MaxMessageLen)
	if err != nil {
		return Message{}, err
	}
	taskRef, err := optionalText("task_ref", in.TaskRef, MaxTaskIDLen)
	if err != nil {
		return Message{}, err
	}
	replyTo, err := optionalText("reply_to_id", in.ReplyToID, MaxTaskIDLen)
	if err != nil {
		return Message{}, err
	}
	m := Message{
		ID: s.ids.New("msg"), AgentName: agent, Message: text, IsHuman: in.IsHuman, MessageType: TypeMessage,
		TaskRef: taskRef, ReplyToID: replyTo, CreatedAt: s.nowMs(),
	}
	if err := s.store.PostMessage(ctx, m); err != nil {
		return Message{}, err
	}
	s.changed(ctx, "chat")
	return m, nil
}

// optionalText checks an optional text field: nil or blank is absent.
func optionalText(field string, v *string, max int) (*string, error) {
	if v == nil || strings.TrimSpace(*v) == "" {
		return nil, nil
	}
	t, err := text.Trimmed(field, *v, true, max)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// Messages lists squad-chat messages newest first.
func (s *Service) Messages(ctx context.Context, limit int, before string) (_ []Message, err error) {
	ctx, done := s.obs.Call(ctx, "discussion.Messages")
	defer func() { done(err) }()
	if limit == 0 {
		limit = DefaultListLimit
	}
	if limit < 1 || limit > MaxListLimit {
		return nil, invalid("invalid_limit", "limit must be from 1 to %d", MaxListLimit)
	}
	ms, err := s.store.ListMessages(ctx, limit, before)
	if err == nil && ms == nil {
		ms = []Message{}
	}
	return ms, err
}
