package agentchat

import "encoding/json"

// EventType names a normalised chat event, as the SSE stream and the
// stored messages call it.
type EventType string

// The event types of docs/agentchat.md.
const (
	EventUser       EventType = "user"
	EventAssistant  EventType = "assistant"
	EventToolUse    EventType = "tool_use"
	EventToolResult EventType = "tool_result"
	EventSystem     EventType = "system"
	EventError      EventType = "error"
	EventDone       EventType = "done"
	// EventStatus ends every run; its data is a StatusData.
	EventStatus EventType = "status"
)

// StatusData is the data of a status event: how a run ended, in the
// statuses slot-machine's chat page knows (idle, error, interrupted). A
// cancelled run ends as the original ends one, with status error (its
// stopped process exits with an error), and Cancelled set so a client can
// tell the two apart; the conversation itself is StatusCancelled.
type StatusData struct {
	Status    Status `json:"status"`
	Cancelled bool   `json:"cancelled,omitempty"`
}

// Closing is the data of the status event that ends a run which left the
// conversation in status s.
func (s Status) Closing() StatusData {
	if s == StatusCancelled {
		return StatusData{Status: StatusError, Cancelled: true}
	}
	return StatusData{Status: s}
}

// Data returns the status event's SSE data: its JSON.
func (d StatusData) Data() []byte {
	b, _ := json.Marshal(d)
	return b
}

// closingStatus is the stored content of the status event that ends a run
// which left the conversation in status s.
func closingStatus(s Status) string { return string(s.Closing().Data()) }

// Event is one normalised event. Which fields are set depends on Type, and
// they marshal to the SSE data of the specification:
//
//	assistant    {"content": "..."}
//	tool_use     {"tool": "Edit", "input": {...}, "id": "toolu_..."}
//	tool_result  {"tool": "Edit", "output": "...", "is_error": false, "id": "toolu_..."}
//	system       {"content": "init", "session_id": "...", "subtype": "init"}
//	error        {"content": "Process exited with code 1"}
//	done         {"conversation_id": "...", "usage": {...}, "cost_usd": 0.01, ...}
type Event struct {
	Type EventType `json:"-"`

	Content   string          `json:"content,omitempty"`
	Tool      string          `json:"tool,omitempty"`
	ToolUseID string          `json:"id,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	Output    string          `json:"output,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
	SessionID string          `json:"session_id,omitempty"`
	// Subtype is the CLI's subtype of a system event ("init"), which
	// slot-machine's page reads.
	Subtype string `json:"subtype,omitempty"`

	// done only.
	ConversationID string          `json:"conversation_id,omitempty"`
	Usage          json.RawMessage `json:"usage,omitempty"`
	CostUSD        *float64        `json:"cost_usd,omitempty"`
	NumTurns       *int            `json:"num_turns,omitempty"`
	Result         string          `json:"result,omitempty"`
}

// Data returns the event's SSE data: its JSON without the type.
func (e Event) Data() []byte {
	b, _ := json.Marshal(e)
	return b
}
