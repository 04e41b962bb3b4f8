package discussion

import (
	"context"
	"time"
)

// Store keeps prompts and the squad chat. Methods that change a prompt
// decide in one atomic step of the backend.
type Store interface {
	// CreatePrompt stores p and its squad-chat message m (linked both ways
	// already) in one atomic step. It returns ErrPromptExists for a taken ID.
	CreatePrompt(ctx context.Context, p Prompt, m Message) error
	// GetPrompt returns the prompt as stored (Prompt.AsOf applies pending
	// timeouts), or ErrPromptNotFound.
	GetPrompt(ctx context.Context, id string) (Prompt, error)
	// ListPrompts returns prompts newest first that match every set filter
	// of p; see ListParams.
	ListPrompts(ctx context.Context, p ListParams) ([]Prompt, error)
	// Respond appends p.Entry to the prompt's collected context and stores
	// p.Message in the squad chat, in one atomic step. When the prompt then
	// has RequiredResponses entries it becomes resolved with ResolvedAt =
	// p.Entry.CreatedAt. Errors: ErrPromptNotFound; ErrOwnPrompt when the
	// responder is the requester; ErrPromptClosed when the prompt is not
	// pending or collecting, or its deadline is at or before
	// p.Entry.CreatedAt; ErrAlreadyResponded when the agent is already in
	// the collected context. Nothing is written on error.
	Respond(ctx context.Context, p RespondParams) (Prompt, error)
	// ClosePrompt moves an open prompt (pending or collecting, deadline after now)
	// to status to (resolved or cancelled) with ResolvedAt = now. Errors:
	// ErrPromptNotFound, ErrPromptClosed.
	ClosePrompt(ctx context.Context, id string, to Status, now time.Time) (Prompt, error)
	// TimeOut marks every open prompt whose deadline is at or before now
	// timed out, with ResolvedAt = its deadline, and returns their IDs. A
	// prompt is timed out once even by concurrent callers.
	TimeOut(ctx context.Context, now time.Time) ([]string, error)
	// ListResponses returns the squad-chat responses to a prompt, oldest
	// first, or ErrPromptNotFound.
	ListResponses(ctx context.Context, promptID string) ([]Message, error)
	// PostMessage stores a plain squad-chat message. When m.ReplyToID is
	// set, the message it names must be stored: the check and the write
	// are one atomic step, and ErrReplyToNotFound is returned (nothing
	// written) when it is not.
	PostMessage(ctx context.Context, m Message) error
	// ListMessages returns up to limit messages newest first, with IDs below
	// before when it is set.
	ListMessages(ctx context.Context, limit int, before string) ([]Message, error)
}

// ListParams filters ListPrompts.
type ListParams struct {
	// Statuses keeps prompts in one of these stored statuses; empty keeps
	// all. (A prompt past its deadline but not yet swept is stored as
	// collecting.)
	Statuses []Status
	// Agent, when set, keeps what that agent could answer: not its own
	// prompts, not ones it has answered.
	Agent string
	// TaskID, when set, keeps prompts of that task.
	TaskID string
	Limit  int
}

// RespondParams is the input of Respond.
type RespondParams struct {
	PromptID string
	Entry    ContextEntry
	Message  Message
}
