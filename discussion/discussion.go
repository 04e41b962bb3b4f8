package discussion

import (
	"time"

	"github.com/agorahq/agora/store"
)

// Status is where a prompt is in its life.
type Status string

// The statuses of docs/discussion.md. Prompts are created collecting;
// pending exists for compatibility with the specification's schema.
const (
	StatusPending    Status = "pending"
	StatusCollecting Status = "collecting"
	StatusResolved   Status = "resolved"
	StatusTimedOut   Status = "timed_out"
	StatusCancelled  Status = "cancelled"
)

// Open reports whether a prompt in status s still accepts responses.
func (s Status) Open() bool { return s == StatusPending || s == StatusCollecting }

// Valid reports whether s is one of the five statuses.
func (s Status) Valid() bool {
	switch s {
	case StatusPending, StatusCollecting, StatusResolved, StatusTimedOut, StatusCancelled:
		return true
	}
	return false
}

// MessageType classifies a squad-chat message.
type MessageType string

// The message types of docs/discussion.md.
const (
	TypeMessage            MessageType = "message"
	TypeDiscussionPrompt   MessageType = "discussion_prompt"
	TypeDiscussionResponse MessageType = "discussion_response"
	TypeSystem             MessageType = "system"
)

// Limits on input.
const (
	MaxPromptLen          = 10_000
	MaxMessageLen         = 10_000
	MaxAgentNameLen       = 100
	MaxTaskIDLen          = 200
	DefaultRequired       = 2
	MaxRequired           = 100
	DefaultTimeoutMinutes = 30
	MaxTimeoutMinutes     = 10_080 // a week
)

// ContextEntry is one response as collected into a prompt. Its JSON is
// its stored form: the backends keep a prompt's collected context as JSON
// entries (PostgreSQL also queries their "agent"), so the tags must not
// change; the HTTP edge shows entries as wire.ContextEntry.
type ContextEntry struct {
	// Agent is the responder's name, trimmed; a prompt collects at most
	// one entry per name.
	Agent string `json:"agent"`
	// Message is the response, trimmed, 1 to MaxMessageLen characters.
	Message string `json:"message"`
	// IsHuman marks a response a human gave; a key needs ScopeAdmin to
	// give one.
	IsHuman bool `json:"is_human"`
	// CreatedAt is when the service took the response, UTC to the
	// millisecond: the time checked against the prompt's deadline.
	CreatedAt time.Time `json:"created_at"`
}

// Prompt is a question put to the squad. It has no JSON form of its own:
// the backends store its fields one by one, and the edges show it as
// wire.Prompt.
type Prompt struct {
	// ID is the service's, "prompt_" and 24 hex digits.
	ID string
	// TaskID names the task the prompt is about, trimmed; nil when none.
	TaskID *string
	// RequesterAgent is the name of who asked (a key's own name when a
	// key authenticated it); it cannot respond to its own prompt.
	RequesterAgent string
	// PromptMessage is the question, trimmed, 1 to MaxPromptLen
	// characters.
	PromptMessage string
	// RequiredResponses is how many responses resolve the prompt, 1 to
	// MaxRequired.
	RequiredResponses int
	// TimeoutMinutes is how long after CreatedAt the prompt times out (see
	// Deadline), 1 to MaxTimeoutMinutes.
	TimeoutMinutes int
	// Status is the status as stored: an open prompt past its deadline
	// stays collecting until a sweep times it out (see AsOf).
	Status Status
	// CollectedContext holds the accepted responses in the order they
	// came; empty, not nil, when a prompt is created.
	CollectedContext []ContextEntry
	// SquadChatID is the ID of the prompt's own squad-chat message (a
	// TypeDiscussionPrompt).
	SquadChatID string
	// ResolvedAt is when the prompt left the open statuses: the
	// resolving response's time, a close's, or the deadline on a timeout.
	// Nil while it is open.
	ResolvedAt *time.Time
	// CreatedAt is when the service created the prompt, UTC to the
	// millisecond.
	CreatedAt time.Time
	// RequesterKey is the ID of the API key that asked, when the host
	// requires keys (httpapi.WithKeys); empty for a prompt asked without
	// one. It never changes.
	RequesterKey string
}

// Deadline is when a collecting prompt times out.
func (p Prompt) Deadline() time.Time {
	return p.CreatedAt.Add(time.Duration(p.TimeoutMinutes) * time.Minute)
}

// Ready reports whether the requester can proceed: the prompt resolved or
// timed out.
func (p Prompt) Ready() bool { return p.Status == StatusResolved || p.Status == StatusTimedOut }

// Final reports whether the prompt will not change any more.
func (p Prompt) Final() bool { return !p.Status.Open() }

// AsOf returns the prompt as it stands at now: an open prompt whose deadline
// has passed is timed out (resolved at its deadline) even before a sweep has
// recorded it.
func (p Prompt) AsOf(now time.Time) Prompt {
	p.TimeOut(now)
	return p
}

// Message is a squad-chat message. Prompts and responses are messages too,
// linked to their prompt by DiscussionPromptID. TaskRef names the task a
// message is about (a prompt's message carries its prompt's task ID), and
// ReplyToID the squad-chat message it answers: the threads of the chat.
// Its JSON is its stored form (Redis keeps each message as JSON), so the
// tags must not change; the HTTP edge shows messages as wire.ChatMessage.
type Message struct {
	// ID is the service's, "msg_" and 24 hex digits: messages sort by it
	// in the order they were made.
	ID string `json:"id"`
	// AgentName is the poster's name, trimmed (a key's own name when a
	// key authenticated it).
	AgentName string `json:"agent_name"`
	// Message is the text: a prompt's question, a response or a post.
	Message string `json:"message"`
	// IsHuman marks a message a human posted.
	IsHuman bool `json:"is_human"`
	// MessageType says whether it is a prompt, a response or a plain
	// message.
	MessageType MessageType `json:"message_type"`
	// DiscussionPromptID is the prompt a prompt's or a response's message
	// belongs to; nil for a plain message.
	DiscussionPromptID *string `json:"discussion_prompt_id"`
	// TaskRef names the task the message is about; nil when none.
	TaskRef *string `json:"task_ref"`
	// ReplyToID is the ID of the squad-chat message a plain message
	// answers; nil when it answers none.
	ReplyToID *string `json:"reply_to_id"`
	// CreatedAt is when the service took the message, UTC to the
	// millisecond.
	CreatedAt time.Time `json:"created_at"`
}

// The errors of this package. Backends return exactly these values.
var (
	ErrPromptNotFound   = &store.Error{Kind: store.ErrNotFound, Code: "prompt_not_found", Message: "discussion prompt not found"}
	ErrPromptClosed     = &store.Error{Kind: store.ErrConflict, Code: "prompt_closed", Message: "the discussion prompt is no longer collecting responses"}
	ErrAlreadyResponded = &store.Error{Kind: store.ErrConflict, Code: "already_responded", Message: "this agent has already responded to the prompt"}
	ErrOwnPrompt        = &store.Error{Kind: store.ErrInvalid, Code: "own_prompt", Message: "the requester cannot respond to its own prompt"}
	ErrPromptExists     = &store.Error{Kind: store.ErrConflict, Code: "prompt_exists", Message: "a prompt with this ID already exists"}
	ErrReplyToNotFound  = &store.Error{Kind: store.ErrInvalid, Code: "reply_to_not_found", Message: "reply_to_id names no message of the squad chat"}
	ErrNotRequester     = &store.Error{Kind: store.ErrForbidden, Code: "not_requester", Message: "only the key that asked, or one with the discussion:admin scope, resolves or cancels this prompt"}
)
