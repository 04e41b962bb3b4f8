package client

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/agorahq/agora/httpapi/wire"
)

// ClaimEvents follows GET /api/v1/events: it sends the ID of every claim
// whose claim, comments, role slots or pipeline changed, and an empty ID
// when several claims may have changed (the stream's first event, and
// every poll of a server without a notifier) — a reader re-reads what it
// shows. The channel is closed when ctx ends or the stream does; a reader
// that stops reading must end ctx.
func (c *Client) ClaimEvents(ctx context.Context) (<-chan string, error) {
	return subscribe(ctx, c, "/api/v1/events", nil, func(ev event) (string, bool) {
		var d wire.ClaimChanged
		ok := ev.name == "changed" && json.Unmarshal([]byte(ev.data), &d) == nil
		return d.ClaimID, ok
	})
}

// SquadEvents follows GET /api/squad-chat/events: it sends the ID of every
// discussion prompt that changed, "chat" when a plain message was posted,
// and an empty ID first. The channel is closed when ctx ends or the
// stream does; a reader that stops reading must end ctx.
func (c *Client) SquadEvents(ctx context.Context) (<-chan string, error) {
	return subscribe(ctx, c, "/api/squad-chat/events", nil, func(ev event) (string, bool) {
		var d wire.SquadChanged
		ok := ev.name == "changed" && json.Unmarshal([]byte(ev.data), &d) == nil
		return d.ID, ok
	})
}

// event is one server-sent event.
type event struct {
	id, name, data string
	dataSeen       bool // a data line came (its value may be empty)
}

// maxEventLine bounds one line of an event stream.
const maxEventLine = 1 << 20

// subscribe opens an event stream and sends what decode keeps of each
// event on the channel it returns, until ctx ends or the stream does. An
// error answer comes back as an *Error, before any event.
func subscribe[T any](ctx context.Context, c *Client, path string, header http.Header, decode func(event) (T, bool)) (<-chan T, error) {
	h := http.Header{"Accept": {"text/event-stream"}}
	for k, v := range header {
		h[k] = v
	}
	res, err := c.send(ctx, "GET", path, nil, h)
	if err != nil {
		return nil, err
	}
	out := make(chan T)
	go func() {
		defer close(out)
		defer res.Body.Close()
		_ = scanEvents(res.Body, func(ev event) bool {
			v, ok := decode(ev)
			if !ok {
				return true
			}
			select {
			case out <- v:
				return true
			case <-ctx.Done():
				return false
			}
		})
	}()
	return out, nil
}

// scanEvents reads a server-sent event stream and hands each complete
// event to emit until emit returns false, the stream ends (an event not
// closed by a blank line is dropped, as the format says), or a line is
// over maxEventLine. Comments (keep-alives) and unknown fields are skipped;
// a field without a colon is a field with an empty value.
func scanEvents(r io.Reader, emit func(event) bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxEventLine)
	var ev event
	started := false
	for sc.Scan() {
		line := sc.Text()
		if line == "" { // the end of an event
			if started && !emit(ev) {
				return nil
			}
			ev, started = event{}, false
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue // a comment: keep-alive
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			ev.id = value
		case "event":
			ev.name = value
		case "data":
			if started && ev.dataSeen {
				ev.data += "\n"
			}
			ev.data += value
			ev.dataSeen = true
		default:
			continue
		}
		started = true
	}
	return sc.Err()
}
