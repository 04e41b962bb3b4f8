package wire

import "time"

// ChatMessage is a squad-chat message as the discussion routes show it
// (mission-control's squad_chat row): plain messages, discussion prompts
// and their responses. TaskRef names the task the message is about and
// ReplyToID the message it answers; both are null when unset.
type ChatMessage struct {
	ID                 string    `json:"id"`
	AgentName          string    `json:"agent_name"`
	Message            string    `json:"message"`
	IsHuman            bool      `json:"is_human"`
	MessageType        string    `json:"message_type"`
	DiscussionPromptID *string   `json:"discussion_prompt_id"`
	TaskRef            *string   `json:"task_ref"`
	ReplyToID          *string   `json:"reply_to_id"`
	CreatedAt          time.Time `json:"created_at"`
}

// ContextEntry is one response as a prompt's collected_context holds it.
type ContextEntry struct {
	Agent     string    `json:"agent"`
	Message   string    `json:"message"`
	IsHuman   bool      `json:"is_human"`
	CreatedAt time.Time `json:"created_at"`
}

// Prompt is a discussion prompt (mission-control's discussion_prompts row).
type Prompt struct {
	ID                string         `json:"id"`
	TaskID            *string        `json:"task_id"`
	RequesterAgent    string         `json:"requester_agent"`
	PromptMessage     string         `json:"prompt_message"`
	RequiredResponses int            `json:"required_responses"`
	TimeoutMinutes    int            `json:"timeout_minutes"`
	Status            string         `json:"status"`
	CollectedContext  []ContextEntry `json:"collected_context"`
	SquadChatID       string         `json:"squad_chat_id"`
	ResolvedAt        *time.Time     `json:"resolved_at"`
	CreatedAt         time.Time      `json:"created_at"`
	// RequesterKey is the ID of the API key that asked, on a server that
	// requires keys; absent otherwise.
	RequesterKey string `json:"requester_key,omitempty"`
}

// Respond is the body of POST /api/discussion/{id}: an answer to a prompt.
type Respond struct {
	AgentName string `json:"agent_name"`
	Message   string `json:"message"`
	IsHuman   bool   `json:"is_human,omitempty"`
}

// RespondAnswer is the answer of POST /api/discussion/{id}. Response,
// Prompt and Ready are mission-control's answer (Ready: the prompt is
// resolved); Chat repeats Response under the name the create answer uses,
// and ResponseCount and RequiredResponses are Agora's additions.
type RespondAnswer struct {
	Response          ChatMessage `json:"response"`
	Prompt            Prompt      `json:"prompt"`
	Ready             bool        `json:"ready"`
	Chat              ChatMessage `json:"chat"`
	ResponseCount     int         `json:"responseCount"`
	RequiredResponses int         `json:"requiredResponses"`
}

// PostMessage is the body of POST /api/squad-chat: a plain message, a reply
// when ReplyToID names the message it answers.
type PostMessage struct {
	AgentName string  `json:"agent_name"`
	Message   string  `json:"message"`
	IsHuman   bool    `json:"is_human,omitempty"`
	TaskRef   *string `json:"task_ref,omitempty"`
	ReplyToID *string `json:"reply_to_id,omitempty"`
}

// CloseAnswer is the answer of PATCH /api/discussion/{id} (resolve or
// cancel), as mission-control answers it: the prompt and the responses it
// collected.
type CloseAnswer struct {
	Prompt           Prompt         `json:"prompt"`
	CollectedContext []ContextEntry `json:"collectedContext"`
}

// CreatedPrompt answers POST /api/discussion: the prompt and the
// squad-chat message that announces it.
type CreatedPrompt struct {
	Prompt Prompt      `json:"prompt"`
	Chat   ChatMessage `json:"chat"`
}

// PromptList answers GET /api/discussion.
type PromptList struct {
	Prompts []Prompt `json:"prompts"`
}

// MessageList answers GET /api/squad-chat, newest first.
type MessageList struct {
	Messages []ChatMessage `json:"messages"`
}

// NewPrompt is the body of POST /api/discussion; nil numbers take the
// server's defaults.
type NewPrompt struct {
	TaskID            *string `json:"task_id,omitempty"`
	RequesterAgent    string  `json:"requester_agent"`
	PromptMessage     string  `json:"prompt_message" openapi:"required"`
	RequiredResponses *Int    `json:"required_responses,omitempty"`
	TimeoutMinutes    *Int    `json:"timeout_minutes,omitempty"`
}

// Close is the body of PATCH /api/discussion/{id}: "resolve" or "cancel".
type Close struct {
	Action string `json:"action" openapi:"required"`
}

// PromptView answers GET /api/discussion/{id}: the prompt, its responses,
// and at the top level what a waiting requester needs (Ready: resolved or
// timed out).
type PromptView struct {
	Prompt            Prompt         `json:"prompt"`
	Responses         []ChatMessage  `json:"responses"`
	Ready             bool           `json:"ready"`
	Status            string         `json:"status"`
	ResponseCount     int            `json:"responseCount"`
	RequiredResponses int            `json:"requiredResponses"`
	CollectedContext  []ContextEntry `json:"collectedContext"`
}

// SquadChanged is the data of GET /api/squad-chat/events' "changed"
// event: the prompt that changed, "chat" for the squad chat, empty for
// the first event.
type SquadChanged struct {
	ID string `json:"id"`
}
