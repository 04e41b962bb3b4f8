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
	Status    Status `json:"status"`              // idle, error or interrupted
	Cancelled bool   `json:"cancelled,omitempty"` // the run was cancelled (Status is then error)
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
	Type EventType `json:"-"` // which event it is; not part of its data

	// Content is an assistant's text, a system event's note ("init") or
	// an error's message.
	Content string `json:"content,omitempty"`
	// Tool names the tool of a tool_use, and of the tool_result that
	// answers it.
	Tool string `json:"tool,omitempty"`
	// ToolUseID is the agent's ID of a tool_use; its tool_result carries
	// the same.
	ToolUseID string `json:"id,omitempty"`
	// Input is a tool_use's input, the agent's JSON as it gave it.
	Input json.RawMessage `json:"input,omitempty"`
	// Output is a tool_result's output, flattened to text.
	Output string `json:"output,omitempty"`
	// IsError marks a tool_result the tool failed.
	IsError bool `json:"is_error,omitempty"`
	// SessionID is the agent session a system init (or a done) reports.
	SessionID string `json:"session_id,omitempty"`
	// Subtype is the CLI's subtype of a system event ("init"), which
	// slot-machine's page reads.
	Subtype string `json:"subtype,omitempty"`

	// done only.
	ConversationID string          `json:"conversation_id,omitempty"`
	Usage          json.RawMessage `json:"usage,omitempty"`     // the agent's token usage, its JSON as given
	CostUSD        *float64        `json:"cost_usd,omitempty"`  // the run's cost in US dollars; nil when unknown
	NumTurns       *int            `json:"num_turns,omitempty"` // the agent's turns in the run
	Result         string          `json:"result,omitempty"`    // the agent's final text, title markers removed
}

// Data returns the event's SSE data: its JSON without the type.
func (e Event) Data() []byte {
	b, _ := json.Marshal(e)
	return b
}
