package wire

import "time"

// The agent chat's API (docs/agentchat.md under /agent/conversations), as
// slot-machine's chat page reads it.

// Conversation is one chat with the agent. User is who started it, as the
// auth scheme (or, on an open API, the create request) named them.
type Conversation struct {
	ID        string    `json:"id"`             // opaque; the {id} of the conversation routes
	Title     string    `json:"title"`          // given at creation, else the first message's opening or the agent's [[TITLE: …]]
	SessionID string    `json:"session_id"`     // the agent CLI's session the next run resumes; empty before the first run reports one
	User      string    `json:"user,omitempty"` // absent when no one was named
	Status    string    `json:"status"`         // "idle", "queued", "running", "error", "cancelled" or "interrupted"
	CreatedAt time.Time `json:"created_at"`     // RFC 3339
	UpdatedAt time.Time `json:"updated_at"`     // RFC 3339; the listing is ordered by it, newest first
}

// ConversationMessage is one stored event of a conversation: a user or
// assistant text, or an event's JSON (Content), by Type.
type ConversationMessage struct {
	ID             int64     `json:"id"`              // unique and rising across every conversation of the store; the stream's event id
	ConversationID string    `json:"conversation_id"` // the conversation it belongs to
	Type           string    `json:"type"`            // user, assistant, tool_use, tool_result, system, error, done or status
	Content        string    `json:"content"`         // the text for user and assistant, else the event's JSON
	CreatedAt      time.Time `json:"created_at"`      // RFC 3339
}

// ChatCreate is the body of POST /agent/conversations.
type ChatCreate struct {
	Title string `json:"title,omitempty"` // optional, at most 200 characters; empty lets the first message name it
	User  string `json:"user,omitempty"`  // optional, at most 200 characters; ignored when the auth scheme names the user
}

// ChatThread answers GET /agent/conversations/{id}.
type ChatThread struct {
	Conversation Conversation          `json:"conversation"` // the conversation's current state
	Messages     []ConversationMessage `json:"messages"`     // oldest first
}

// ChatSend is the body of POST /agent/conversations/{id}/messages.
type ChatSend struct {
	// Content is required: the message to the agent, at most 100,000
	// characters.
	Content string `json:"content" openapi:"required"`
}

// ChatSent answers a message that started a run or was queued.
type ChatSent struct {
	Queued    bool  `json:"queued"`     // true when the run waits behind another conversation's
	MessageID int64 `json:"message_id"` // the stored user message's ID
}

// ChatBusy answers (409) a message to a conversation whose agent works: it
// is stored, and starts no run (Queued is always false).
type ChatBusy struct {
	Error     Detail `json:"error"`      // code "agent_busy"; the message is stored but starts no run
	Queued    bool   `json:"queued"`     // always false
	MessageID int64  `json:"message_id"` // the stored user message's ID
}

// ErrorCode returns the error's code, for the X-Aop-Error-Code header.
func (b ChatBusy) ErrorCode() string { return b.Error.Code }

// ChatText is the stream's data of a user or assistant text message.
type ChatText struct {
	// Content is the user's or the agent's text, as stored.
	Content string `json:"content"`
}

// ChatLook answers GET /chat/config: the settings slot-machine's chat page
// reads when it loads. AuthMode is "none" for an open API, "hmac" and
// "trusted" for the signed-user header schemes (the page then sends
// X-SlotMachine-User), or the name of another scheme; AuthSecret is the
// key the page signs with, served only when the host chose so.
type ChatLook struct {
	AuthMode   string `json:"authMode"`   // "none", "secret", "hmac", "trusted", "delegate" or "custom"
	AuthSecret string `json:"authSecret"` // the key the page signs users with; empty unless the hmac scheme serves it
	ChatTitle  string `json:"chatTitle"`  // the page's title; "Agora" by default
	ChatAccent string `json:"chatAccent"` // a CSS colour; empty keeps the page's own
}
