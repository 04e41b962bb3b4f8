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
	// Respond decides p.Entry by Prompt.Respond on the prompt as stored
	// and, when it is accepted, stores the changed prompt and p.Message in
	// the squad chat, all in one atomic step. Errors: ErrPromptNotFound,
	// else Prompt.Respond's. Nothing is written on error.
	Respond(ctx context.Context, p RespondParams) (Prompt, error)
	// ClosePrompt decides by Prompt.Close(to, now) on the prompt as stored
	// and stores the change, in one atomic step. Errors: ErrPromptNotFound,
	// ErrPromptClosed.
	ClosePrompt(ctx context.Context, id string, to Status, now time.Time) (Prompt, error)
	// TimeOut applies Prompt.TimeOut(now) to every prompt and returns the
	// IDs of those it timed out. A prompt is timed out once even by
	// concurrent callers.
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
	// Statuses keeps prompts in one of these statuses as they stand at
	// Now (Prompt.AsOf): a prompt stored pending or collecting whose
	// deadline is before Now, not yet swept, is timed_out. Empty
	// keeps all.
	Statuses []Status
	// Now is when the statuses are read.
	Now time.Time
	// Agent, when set, keeps what that agent could answer: not its own
	// prompts, not ones it has answered.
	Agent string
	// TaskID, when set, keeps prompts of that task.
	TaskID string
	// Limit is the most prompts returned, at least 1.
	Limit int
}

// RespondParams is the input of Respond.
type RespondParams struct {
	PromptID string       // the prompt answered
	Entry    ContextEntry // the response to collect; its CreatedAt is checked against the deadline
	Message  Message      // the response's squad-chat message, stored when Entry is accepted
}
