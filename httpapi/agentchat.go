package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/agorahq/agora/agentchat"
)

// AgentChat returns the handler of the agent API of seeds/agentchat.md
// under /agent/conversations. It runs a coding agent on the host: mount it
// behind the host's own authentication, at "/agent/".
func AgentChat(svc *agentchat.Service, opts ...Option) http.Handler {
	a := &chatAPI{svc: svc}
	rt := newRouter(newConfig(opts))
	open := func(fn func(http.ResponseWriter, *http.Request) error) route { return route{fn: fn} }
	rt.handle("POST", "/agent/conversations", open(a.create))
	rt.handle("GET", "/agent/conversations", open(a.list))
	rt.handle("GET", "/agent/conversations/{id}", open(a.get))
	rt.handle("POST", "/agent/conversations/{id}/messages", open(a.send))
	rt.handle("GET", "/agent/conversations/{id}/stream", open(a.stream))
	rt.handle("POST", "/agent/conversations/{id}/cancel", open(a.cancel))
	rt.handle("DELETE", "/agent/conversations/{id}", open(a.delete))
	return rt
}

type chatAPI struct {
	svc *agentchat.Service
}

func (a *chatAPI) create(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Title string `json:"title"`
	}
	if err := decodeOptionalBody(w, r, &in); err != nil {
		return err
	}
	c, err := a.svc.Create(r.Context(), in.Title)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, c)
	return nil
}

func (a *chatAPI) list(w http.ResponseWriter, r *http.Request) error {
	cs, err := a.svc.Conversations(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"conversations": cs})
	return nil
}

func (a *chatAPI) get(w http.ResponseWriter, r *http.Request) error {
	c, ms, err := a.svc.Conversation(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"conversation": c, "messages": ms})
	return nil
}

func (a *chatAPI) send(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Content string `json:"content"`
	}
	if err := decodeBody(w, r, &in); err != nil {
		return err
	}
	res, err := a.svc.Send(r.Context(), r.PathValue("id"), in.Content)
	if errors.Is(err, agentchat.ErrBusy) {
		// The message is stored; it just starts no run.
		writeJSON(w, http.StatusConflict, map[string]any{
			"error": errorDetail{agentchat.ErrBusy.Code, agentchat.ErrBusy.Message}, "queued": false, "message_id": res.Message.ID,
		})
		return nil
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"queued": res.Queued, "message_id": res.Message.ID})
	return nil
}

func (a *chatAPI) cancel(w http.ResponseWriter, r *http.Request) error {
	if err := a.svc.Cancel(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
	return nil
}

func (a *chatAPI) delete(w http.ResponseWriter, r *http.Request) error {
	if err := a.svc.Delete(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// sseData is a stored message as the stream's data: text messages wrapped
// as {"content": …}, events as their stored JSON.
func sseData(m agentchat.Message) []byte {
	if m.Type == agentchat.EventUser || m.Type == agentchat.EventAssistant {
		b, _ := json.Marshal(map[string]string{"content": m.Content})
		return b
	}
	return []byte(m.Content)
}

// stream sends the conversation's messages as server-sent events — event
// name the message type, id the message ID — from after Last-Event-ID (or
// ?after=N) on, then follows new ones. Every message was stored before it
// is sent, so a reconnecting client loses nothing.
func (a *chatAPI) stream(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id := r.PathValue("id")
	after, _ := strconv.ParseInt(r.Header.Get("Last-Event-ID"), 10, 64)
	if q := r.URL.Query().Get("after"); q != "" {
		n, err := strconv.ParseInt(q, 10, 64)
		if err != nil || n < 0 {
			return invalid("invalid_after", "after must be a message ID")
		}
		after = n
	}
	sub, err := a.svc.Subscribe(ctx, id)
	if err != nil {
		return err
	}
	if sub != nil {
		defer sub.Close()
	}
	ms, err := a.svc.Messages(ctx, id, after)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	heartbeat := time.NewTicker(15 * time.Second)
	defer heartbeat.Stop()
	for {
		for _, m := range ms {
			fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", m.ID, m.Type, sseData(m))
			after = m.ID
		}
		if flusher != nil {
			flusher.Flush()
		}
		var events <-chan []byte
		if sub != nil {
			events = sub.C
		}
		poll := time.NewTimer(time.Second) // a safety net for a lost event
		select {
		case <-ctx.Done():
			poll.Stop()
			return nil
		case <-heartbeat.C:
			fmt.Fprint(w, ": keep-alive\n\n")
		case <-events:
		case <-poll.C:
		}
		poll.Stop()
		if ms, err = a.svc.Messages(ctx, id, after); err != nil {
			return nil // deleted, or the store is gone: the client reconnects
		}
	}
}
