package wire

import "time"

// The agent chat's API (docs/agentchat.md under /agent/conversations), as
// slot-machine's chat page reads it.

// Conversation is one chat with the agent. User is who started it, as the
// auth scheme (or, on an open API, the create request) named them.
type Conversation struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	SessionID string    `json:"session_id"`
	User      string    `json:"user,omitempty"`
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// ConversationMessage is one stored event of a conversation: a user or
// assistant text, or an event's JSON (Content), by Type.
type ConversationMessage struct {
	ID             int64     `json:"id"`
	ConversationID string    `json:"conversation_id"`
	Type           string    `json:"type"`
	Content        string    `json:"content"`
	CreatedAt      time.Time `json:"created_at"`
}

// ChatCreate is the body of POST /agent/conversations.
type ChatCreate struct {
	Title string `json:"title,omitempty"`
	User  string `json:"user,omitempty"`
}

// ChatThread answers GET /agent/conversations/{id}.
type ChatThread struct {
	Conversation Conversation          `json:"conversation"`
	Messages     []ConversationMessage `json:"messages"`
}

// ChatSend is the body of POST /agent/conversations/{id}/messages.
type ChatSend struct {
	Content string `json:"content" openapi:"required"`
}

// ChatSent answers a message that started a run or was queued.
type ChatSent struct {
	Queued    bool  `json:"queued"`
	MessageID int64 `json:"message_id"`
}

// ChatBusy answers (409) a message to a conversation whose agent works: it
// is stored, and starts no run (Queued is always false).
type ChatBusy struct {
	Error     Detail `json:"error"`
	Queued    bool   `json:"queued"`
	MessageID int64  `json:"message_id"`
}

// ChatText is the stream's data of a user or assistant text message.
type ChatText struct {
	Content string `json:"content"`
}

// ChatLook answers GET /chat/config: the settings slot-machine's chat page
// reads when it loads. AuthMode is "none" for an open API, "hmac" and
// "trusted" for the signed-user header schemes (the page then sends
// X-SlotMachine-User), or the name of another scheme; AuthSecret is the
// key the page signs with, served only when the host chose so.
type ChatLook struct {
	AuthMode   string `json:"authMode"`
	AuthSecret string `json:"authSecret"`
	ChatTitle  string `json:"chatTitle"`
	ChatAccent string `json:"chatAccent"`
}
