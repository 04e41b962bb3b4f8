package claudecli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/agorahq/agora/agentchat"
)

// Parser turns the CLI's stream-json lines into normalised events. It
// remembers what later lines refer to: the session ID, and the tool name
// of each tool_use so its tool_result can say which tool answered.
type Parser struct {
	// SessionID is the CLI session, from the init line or the result line.
	SessionID string
	// Result is the result line, once seen.
	Result *ResultLine
	tools  map[string]string // tool_use ID -> tool name
}

// ResultLine is what the parser keeps of the CLI's final line.
type ResultLine struct {
	Subtype  string   // "success", or the kind of error ("error_…")
	IsError  bool     // the CLI reported the run failed
	NumTurns int      // the turns the agent took; 0 when it took none
	Text     string   // the result text: the agent's last answer or the error
	Errors   []string // the CLI's error messages, if any
}

// line is the part of a stream-json line the parser reads.
type line struct {
	Type      string          `json:"type"`
	Subtype   string          `json:"subtype"`
	SessionID string          `json:"session_id"`
	Message   json.RawMessage `json:"message"`
	// system api_retry
	Attempt    int    `json:"attempt"`
	MaxRetries int    `json:"max_retries"`
	Error      string `json:"error"`
	// result
	IsError      bool            `json:"is_error"`
	NumTurns     int             `json:"num_turns"`
	Result       string          `json:"result"`
	Errors       []string        `json:"errors"`
	TotalCostUSD *float64        `json:"total_cost_usd"`
	Usage        json.RawMessage `json:"usage"`
}

type message struct {
	Content []block `json:"content"`
}

type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// ErrNotJSON reports a stdout line that is not a JSON object; callers keep
// going (the CLI may print a stray line) and may log it.
var ErrNotJSON = errors.New("claudecli: stream-json line is not a JSON object")

// ParseLine returns the events of one stdout line. Unknown line types
// (stream_event partial messages, future additions) yield no events.
func (p *Parser) ParseLine(raw []byte) ([]agentchat.Event, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, nil
	}
	var l line
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotJSON, err)
	}
	if l.SessionID != "" && (l.Type == "system" && l.Subtype == "init" || l.Type == "result") {
		p.SessionID = l.SessionID
	}
	switch l.Type {
	case "system":
		switch l.Subtype {
		case "init":
			return []agentchat.Event{{Type: agentchat.EventSystem, Content: "init", SessionID: l.SessionID, Subtype: "init"}}, nil
		case "api_retry":
			return []agentchat.Event{{Type: agentchat.EventSystem, Content: fmt.Sprintf("API retry %d/%d: %s", l.Attempt, l.MaxRetries, l.Error)}}, nil
		}
		return nil, nil
	case "assistant":
		return p.assistant(l.Message), nil
	case "user":
		return p.toolResults(l.Message), nil
	case "result":
		return p.result(l), nil
	}
	return nil, nil
}

func (p *Parser) assistant(raw json.RawMessage) []agentchat.Event {
	var m message
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	var out []agentchat.Event
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			if strings.TrimSpace(b.Text) != "" {
				out = append(out, agentchat.Event{Type: agentchat.EventAssistant, Content: b.Text})
			}
		case "tool_use":
			if p.tools == nil {
				p.tools = map[string]string{}
			}
			p.tools[b.ID] = b.Name
			out = append(out, agentchat.Event{Type: agentchat.EventToolUse, Tool: b.Name, ToolUseID: b.ID, Input: b.Input})
		}
	}
	return out
}

func (p *Parser) toolResults(raw json.RawMessage) []agentchat.Event {
	var m message
	if json.Unmarshal(raw, &m) != nil {
		return nil // a plain user echo has string content: nothing to show
	}
	var out []agentchat.Event
	for _, b := range m.Content {
		if b.Type != "tool_result" {
			continue
		}
		out = append(out, agentchat.Event{Type: agentchat.EventToolResult, Tool: p.tools[b.ToolUseID], ToolUseID: b.ToolUseID, Output: contentText(b.Content), IsError: b.IsError})
	}
	return out
}

// contentText flattens a tool_result's content: a string, or a list of
// text blocks.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) == nil {
		var parts []string
		for _, b := range blocks {
			if b.Type == "text" {
				parts = append(parts, b.Text)
			}
		}
		return strings.Join(parts, "\n")
	}
	return string(raw)
}

func (p *Parser) result(l line) []agentchat.Event {
	p.Result = &ResultLine{Subtype: l.Subtype, IsError: l.IsError, NumTurns: l.NumTurns, Text: l.Result, Errors: l.Errors}
	var out []agentchat.Event
	if l.IsError || strings.HasPrefix(l.Subtype, "error") {
		msg := l.Result
		if len(l.Errors) > 0 {
			msg = strings.Join(l.Errors, "; ")
		}
		if msg == "" {
			msg = l.Subtype
		}
		out = append(out, agentchat.Event{Type: agentchat.EventError, Content: msg})
	}
	turns := l.NumTurns
	out = append(out, agentchat.Event{Type: agentchat.EventDone, Usage: l.Usage, CostUSD: l.TotalCostUSD, NumTurns: &turns, Result: l.Result, SessionID: l.SessionID})
	return out
}

// ResumeFailed reports whether a result says that --resume did not work:
// an error with no turn taken, or tool_use IDs the API refused as
// duplicates. The runner then retries once without --resume.
func (r *ResultLine) ResumeFailed(stderr string) bool {
	text := stderr
	if r != nil {
		if r.IsError && r.NumTurns == 0 {
			return true
		}
		text += " " + r.Text + " " + strings.Join(r.Errors, " ")
	}
	// The API writes "`tool_use` ids must be unique".
	return strings.Contains(strings.ReplaceAll(text, "`", ""), "tool_use ids must be unique")
}

// ReadLines calls fn with every line of r, however long: stream-json lines
// exceed 64 KiB when a tool returns a large file.
func ReadLines(r io.Reader, fn func([]byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		b, err := br.ReadBytes('\n')
		if len(b) > 0 {
			if ferr := fn(b); ferr != nil {
				return ferr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
