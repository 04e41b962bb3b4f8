package wire

import "time"

// ChatMessage is a squad-chat message as the discussion routes show it
// (mission-control's squad_chat row): plain messages, discussion prompts
// and their responses. TaskRef names the task the message is about and
// ReplyToID the message it answers; both are null when unset.
type ChatMessage struct {
	ID                 string    `json:"id"`                   // opaque; what reply_to_id and ?before= name
	AgentName          string    `json:"agent_name"`           // the speaker; with keys required, the key's name
	Message            string    `json:"message"`              // the text, trimmed; at most 10,000 characters
	IsHuman            bool      `json:"is_human"`             // posted by a person rather than an agent
	MessageType        string    `json:"message_type"`         // "message", "discussion_prompt", "discussion_response" or "system"
	DiscussionPromptID *string   `json:"discussion_prompt_id"` // the prompt a prompt or response message belongs to; null for plain messages
	TaskRef            *string   `json:"task_ref"`             // the task it is about; a prompt's message carries its task_id
	ReplyToID          *string   `json:"reply_to_id"`          // the squad-chat message it answers
	CreatedAt          time.Time `json:"created_at"`           // RFC 3339, millisecond precision
}

// ContextEntry is one response as a prompt's collected_context holds it.
type ContextEntry struct {
	Agent     string    `json:"agent"`      // the responder's name
	Message   string    `json:"message"`    // the response's text
	IsHuman   bool      `json:"is_human"`   // answered by a person rather than an agent
	CreatedAt time.Time `json:"created_at"` // RFC 3339
}

// Prompt is a discussion prompt (mission-control's discussion_prompts row).
type Prompt struct {
	ID                string         `json:"id"`                 // opaque; the {id} of the prompt routes
	TaskID            *string        `json:"task_id"`            // the task it is about; null when none was given
	RequesterAgent    string         `json:"requester_agent"`    // who asked; with keys required, the key's name
	PromptMessage     string         `json:"prompt_message"`     // the question, trimmed; at most 10,000 characters
	RequiredResponses int            `json:"required_responses"` // distinct responders that resolve it, 1 to 100
	TimeoutMinutes    int            `json:"timeout_minutes"`    // minutes after CreatedAt at which it times out, 1 to 10,080
	Status            string         `json:"status"`             // "collecting", "resolved", "timed_out" or "cancelled" ("pending" is never set)
	CollectedContext  []ContextEntry `json:"collected_context"`  // the responses, oldest first; [] when none
	SquadChatID       string         `json:"squad_chat_id"`      // the ID of the squad-chat message that announced it
	ResolvedAt        *time.Time     `json:"resolved_at"`        // RFC 3339, when it left collecting; null while collecting
	CreatedAt         time.Time      `json:"created_at"`         // RFC 3339, millisecond precision
	// RequesterKey is the ID of the API key that asked, on a server that
	// requires keys; absent otherwise.
	RequesterKey string `json:"requester_key,omitempty"`
}

// Respond is the body of POST /api/discussion/{id}: an answer to a prompt.
type Respond struct {
	AgentName string `json:"agent_name"`         // the responder, 1 to 100 characters; with keys required, blank or the key's name
	Message   string `json:"message"`            // required: 1 to 10,000 characters, trimmed
	IsHuman   bool   `json:"is_human,omitempty"` // marks a person's answer; with keys required, needs discussion:admin
}

// RespondAnswer is the answer of POST /api/discussion/{id}. Response,
// Prompt and Ready are mission-control's answer (Ready: the prompt is
// resolved); Chat repeats Response under the name the create answer uses,
// and ResponseCount and RequiredResponses are Agora's additions.
type RespondAnswer struct {
	Response          ChatMessage `json:"response"`          // the response as a squad-chat message
	Prompt            Prompt      `json:"prompt"`            // after the response; resolved when it was the last one needed
	Ready             bool        `json:"ready"`             // whether the prompt is resolved or timed out
	Chat              ChatMessage `json:"chat"`              // same message as Response
	ResponseCount     int         `json:"responseCount"`     // responses collected so far
	RequiredResponses int         `json:"requiredResponses"` // the prompt's quorum
}

// PostMessage is the body of POST /api/squad-chat: a plain message, a reply
// when ReplyToID names the message it answers.
type PostMessage struct {
	AgentName string  `json:"agent_name"`            // the speaker, 1 to 100 characters; with keys required, blank or the key's name
	Message   string  `json:"message"`               // required: 1 to 10,000 characters, trimmed
	IsHuman   bool    `json:"is_human,omitempty"`    // marks a person's message; with keys required, needs discussion:admin
	TaskRef   *string `json:"task_ref,omitempty"`    // optional, at most 200 characters; blank is none
	ReplyToID *string `json:"reply_to_id,omitempty"` // optional: an existing squad-chat message's ID (400 reply_to_not_found otherwise)
}

// CloseAnswer is the answer of PATCH /api/discussion/{id} (resolve or
// cancel), as mission-control answers it: the prompt and the responses it
// collected.
type CloseAnswer struct {
	Prompt           Prompt         `json:"prompt"`           // after the close: resolved or cancelled
	CollectedContext []ContextEntry `json:"collectedContext"` // same entries as Prompt.CollectedContext
}

// CreatedPrompt answers POST /api/discussion: the prompt and the
// squad-chat message that announces it.
type CreatedPrompt struct {
	Prompt Prompt      `json:"prompt"` // the new prompt, collecting
	Chat   ChatMessage `json:"chat"`   // its discussion_prompt message in the squad chat
}

// PromptList answers GET /api/discussion.
type PromptList struct {
	// Prompts are newest first: those in ?status= (default pending and
	// collecting), at most ?limit= (default 100, at most 500); never null.
	Prompts []Prompt `json:"prompts"`
}

// MessageList answers GET /api/squad-chat, newest first.
type MessageList struct {
	// Messages are newest first, at most ?limit= (default 100, at most 500),
	// older than ?before= when given; never null.
	Messages []ChatMessage `json:"messages"`
}

// NewPrompt is the body of POST /api/discussion; nil numbers take the
// server's defaults.
type NewPrompt struct {
	TaskID            *string `json:"task_id,omitempty"`                 // optional, at most 200 characters; blank is none
	RequesterAgent    string  `json:"requester_agent"`                   // required unless a key names the asker: 1 to 100 characters
	PromptMessage     string  `json:"prompt_message" openapi:"required"` // required: 1 to 10,000 characters, trimmed
	RequiredResponses *Int    `json:"required_responses,omitempty"`      // integer 1 to 100; absent: 2
	TimeoutMinutes    *Int    `json:"timeout_minutes,omitempty"`         // integer 1 to 10,080 (a week); absent: 30
}

// Close is the body of PATCH /api/discussion/{id}: "resolve" or "cancel".
type Close struct {
	// Action is required: "resolve" or "cancel".
	Action string `json:"action" openapi:"required"`
}

// PromptView answers GET /api/discussion/{id}: the prompt, its responses,
// and at the top level what a waiting requester needs (Ready: resolved or
// timed out).
type PromptView struct {
	Prompt            Prompt         `json:"prompt"`            // as it stands now: an overdue prompt reads timed_out
	Responses         []ChatMessage  `json:"responses"`         // the response messages, oldest first
	Ready             bool           `json:"ready"`             // resolved or timed out: the requester may go on
	Status            string         `json:"status"`            // same as Prompt.Status
	ResponseCount     int            `json:"responseCount"`     // len(CollectedContext)
	RequiredResponses int            `json:"requiredResponses"` // the prompt's quorum
	CollectedContext  []ContextEntry `json:"collectedContext"`  // same entries as Prompt.CollectedContext
}

// SquadChanged is the data of GET /api/squad-chat/events' "changed"
// event: the prompt that changed, "chat" for the squad chat, empty for
// the first event.
type SquadChanged struct {
	// ID is the changed prompt's ID, "chat" for a squad-chat message, or
	// empty on the stream's first event.
	ID string `json:"id"`
}
