package agentchat

import (
	"context"
	"time"

	"github.com/agorahq/agora/store"
)

// Status is where a conversation's agent is.
type Status string

// The conversation statuses.
const (
	StatusIdle        Status = "idle"
	StatusQueued      Status = "queued"
	StatusRunning     Status = "running"
	StatusError       Status = "error"
	StatusInterrupted Status = "interrupted" // left running by a process that stopped
	StatusCancelled   Status = "cancelled"
)

// Busy reports whether a conversation in status s has a run going or
// waiting.
func (s Status) Busy() bool { return s == StatusRunning || s == StatusQueued }

// Conversation is one chat with the agent. Its shape on the wire is
// httpapi/wire's, its stored form each backend's own: it has none of its
// own.
type Conversation struct {
	// ID is the service's, "conv_" and 24 hex digits.
	ID string
	// Title is trimmed, at most MaxTitleLen characters; empty until the
	// creator, the first message or the agent gives one.
	Title string
	// SessionID is the agent session the next run resumes, as the last
	// run that reported one left it; empty before the first.
	SessionID string
	// User is who started the conversation, as the auth scheme (or, on an
	// open API, the create request) named them; slot-machine's field.
	User string
	// Status is where the conversation's agent is; StatusIdle when it is
	// created.
	Status Status
	// CreatedAt is when the service created the conversation, in UTC.
	CreatedAt time.Time
	// UpdatedAt is when the service last wrote its status, session or
	// title, in UTC: what listings order by.
	UpdatedAt time.Time
}

// Message is one stored event of a conversation. IDs are unique across every
// conversation of a store and rise in the order messages are stored, as
// slot-machine numbers its messages: a client resumes a stream from the last
// ID it saw, even one it saw in another conversation (slot-machine's chat
// page keeps it when the user starts a new conversation).
type Message struct {
	ID             int64     `json:"id"`              // the store's, from AppendChatMessage
	ConversationID string    `json:"conversation_id"` // the conversation the event belongs to
	Type           EventType `json:"type"`            // which event: user, assistant, tool_use, …
	Content        string    `json:"content"`         // text, or the event's JSON
	CreatedAt      time.Time `json:"created_at"`      // when the service stored it, in UTC
}

// ErrConversationNotFound is returned for an unknown conversation.
var ErrConversationNotFound = &store.Error{Kind: store.ErrNotFound, Code: "conversation_not_found", Message: "conversation not found"}

// ErrConversationBusy is what Store.DeleteConversation returns, deleting
// nothing, for a conversation whose agent is running or queued (in any
// process sharing the store); the Service answers it as ErrBusy.
var ErrConversationBusy = &store.Error{Kind: store.ErrConflict, Code: "conversation_busy", Message: "the conversation's agent is running or queued"}

// ErrNotRunning is what Service.Cancel, and Store.RequestCancel, return
// for a conversation whose agent is neither running nor queued.
var ErrNotRunning = &store.Error{Kind: store.ErrConflict, Code: "not_running", Message: "the conversation has no running or queued agent"}

// ListConversationsParams pages Store.ListConversations.
type ListConversationsParams struct {
	Limit  int    // at least 1
	Before string // a conversation ID: only those after it in the order; "" from the first
}

// Store keeps conversations and their messages.
type Store interface {
	// CreateConversation stores c.
	CreateConversation(ctx context.Context, c Conversation) error
	// GetConversation returns a conversation or ErrConversationNotFound.
	GetConversation(ctx context.Context, id string) (Conversation, error)
	// ListConversations returns at most p.Limit conversations, most
	// recently updated first (ties by ID, higher first), starting after
	// p.Before when it is set; ErrConversationNotFound when p.Before names
	// no conversation.
	ListConversations(ctx context.Context, p ListConversationsParams) ([]Conversation, error)
	// DeleteConversation removes a conversation and its messages, or
	// returns ErrConversationNotFound; a conversation whose status is
	// running or queued is ErrConversationBusy, and nothing is deleted. The
	// check and the delete are one atomic step, so a run that starts in
	// another process never loses its conversation.
	DeleteConversation(ctx context.Context, id string) error
	// UpdateConversation sets the status, session ID and title of
	// conversation u.ID (empty session and title leave them as they are)
	// and its UpdatedAt to u.At, or returns ErrConversationNotFound. A
	// status other than running or queued clears the conversation's
	// cancel request (see RequestCancel); running or queued keeps it.
	UpdateConversation(ctx context.Context, u ConversationUpdate) error
	// AppendChatMessage stores a message under the store's next message ID,
	// in one atomic step, and returns it. IDs are unique across all
	// conversations and every process sharing the store; within a
	// conversation, a message stored later has a higher ID, and a message is
	// readable by the time a later one of its conversation is (appends to one
	// conversation are ordered).
	AppendChatMessage(ctx context.Context, m Message) (Message, error)
	// ListChatMessages returns the conversation's messages with IDs above
	// after, in order; after need not be an ID of this conversation.
	ListChatMessages(ctx context.Context, conversationID string, after int64) ([]Message, error)
	// RenewConversations sets the lease of those of ids that are running
	// or queued to until (see ConversationUpdate.LeaseUntil); the others,
	// and IDs no conversation has, are left alone. It changes no UpdatedAt.
	// It returns the IDs, among those it renewed, whose cancel was
	// requested (RequestCancel), in no particular order: the runs the
	// process renewing them is to stop.
	RenewConversations(ctx context.Context, ids []string, until time.Time) ([]string, error)
	// RequestCancel marks a running or queued conversation as asked to
	// stop, for the process that runs or queues it to find when it renews
	// its lease: the request is state, so it is not lost with a notifier
	// message. A conversation neither running nor queued is ErrNotRunning,
	// an unknown one ErrConversationNotFound, and neither is marked. The
	// check of the status and the mark are one atomic step, so a run that
	// ends meanwhile never leaves a mark behind. It changes neither the
	// status nor UpdatedAt. The mark stays while the conversation is
	// running or queued (a cancel asked of a queued run holds once the run
	// starts) and is cleared when it leaves both: by UpdateConversation
	// with another status, or by InterruptRunning.
	RequestCancel(ctx context.Context, id string) error
	// InterruptRunning marks interrupted, UpdatedAt at, every running or
	// queued conversation whose lease ended at or before at, or that has
	// none, and returns their IDs: the runs of a process that stopped. A
	// conversation whose lease is still running is left alone: a live
	// process is working on it. It clears the cancel requests of those it
	// marks (see RequestCancel).
	InterruptRunning(ctx context.Context, at time.Time) ([]string, error)
}

// ConversationUpdate is what Store.UpdateConversation changes of a
// conversation.
type ConversationUpdate struct {
	ID        string    // the conversation to update
	Status    Status    // the new status, always written
	SessionID string    // empty: unchanged
	Title     string    // empty: unchanged
	At        time.Time // becomes UpdatedAt
	// LeaseUntil, with a running or queued Status, is until when the
	// process that runs or queues the conversation vouches for it
	// (RenewConversations extends it; InterruptRunning spares it until
	// then). Zero leaves the lease as it is.
	LeaseUntil time.Time
}
