package agentchat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agorahq/agora/internal/httpjson"
)

// HandlerOption configures Handler.
type HandlerOption func(*handlerConfig)

type handlerConfig struct {
	log  *slog.Logger
	auth Auth
	look ChatConfig // AuthMode and AuthSecret come from auth
	css  string
}

// WithLook sets what GET /chat/config tells slot-machine's chat page to
// show: its title (default "Agora") and accent colour (any CSS colour;
// empty keeps the page's own), and css, served at /chat.css for the page
// to load (empty serves an empty sheet).
func WithLook(title, accent, css string) HandlerOption {
	return func(c *handlerConfig) {
		c.look.ChatTitle, c.look.ChatAccent, c.css = title, accent, css
	}
}

// ChatConfig is GET /chat/config: the settings slot-machine's chat page
// reads when it loads. AuthMode is "none" for an open API, "hmac" and
// "trusted" for the signed-user header schemes (the page then sends
// X-SlotMachine-User), or the name of another scheme; AuthSecret is the
// key the page signs with, served only when the host chose so (see
// SignedUser).
type ChatConfig struct {
	AuthMode   string `json:"authMode"`
	AuthSecret string `json:"authSecret"`
	ChatTitle  string `json:"chatTitle"`
	ChatAccent string `json:"chatAccent"`
}

// WithLogger sets where unexpected errors are logged; the default is
// slog.Default().
func WithLogger(l *slog.Logger) HandlerOption { return func(c *handlerConfig) { c.log = l } }

// Handler returns the handler of the agent API of seeds/agentchat.md under
// /agent/conversations, of the chat console at /chat and /chat.js, and of
// /chat/config and /chat.css for slot-machine's chat page. It runs a coding
// agent on the host: protect it with WithAuth (or the host's own
// authentication); /chat, /chat.js, /chat/config and /chat.css stay open,
// as in slot-machine. Mount it at "/agent/", "/chat", "/chat/", "/chat.js"
// and "/chat.css", or put it in front of an application with Intercept.
func Handler(svc *Service, opts ...HandlerOption) http.Handler {
	cfg := handlerConfig{log: slog.Default(), auth: NoAuth(), look: ChatConfig{ChatTitle: "Agora"}}
	for _, o := range opts {
		o(&cfg)
	}
	cfg.look.AuthMode, cfg.look.AuthSecret = cfg.auth.Mode, cfg.auth.PageSecret
	a := &chatAPI{svc: svc, mode: cfg.auth.Mode}
	rt := httpjson.NewRouter(cfg.log)
	open := func(fn func(http.ResponseWriter, *http.Request) error) func(http.ResponseWriter, *http.Request) error {
		if cfg.auth.Authenticate == nil {
			return fn
		}
		return func(w http.ResponseWriter, r *http.Request) error {
			user, err := cfg.auth.Authenticate(r)
			if errors.Is(err, ErrAuthUnavailable) {
				// What went wrong with the application stays in the log.
				cfg.log.WarnContext(r.Context(), "agent chat auth", "err", err)
				w.Header().Set("Retry-After", strconv.Itoa(int(httpjson.UnavailableRetryAfter/time.Second)))
				httpjson.Write(w, http.StatusServiceUnavailable, httpjson.ErrorBody("auth_unavailable",
					"the application could not say whether you may use the agent; try again later"))
				return nil
			}
			if err != nil {
				return err
			}
			return fn(w, r.WithContext(context.WithValue(r.Context(), userKey{}, user)))
		}
	}
	rt.Handle("POST", "/agent/conversations", open(a.create))
	rt.Handle("GET", "/agent/conversations", open(a.list))
	rt.Handle("GET", "/agent/conversations/{id}", open(a.get))
	rt.Handle("POST", "/agent/conversations/{id}/messages", open(a.send))
	rt.Handle("GET", "/agent/conversations/{id}/stream", open(a.stream))
	rt.Handle("POST", "/agent/conversations/{id}/cancel", open(a.cancel))
	rt.Handle("DELETE", "/agent/conversations/{id}", open(a.delete))
	rt.Handle("GET", "/chat/config", func(w http.ResponseWriter, r *http.Request) error {
		httpjson.Write(w, http.StatusOK, cfg.look)
		return nil
	})
	rt.HandleRaw("GET /chat.css", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		_, _ = io.WriteString(w, cfg.css)
	}))
	ui := UI()
	rt.HandleRaw("GET /chat", ui)
	rt.HandleRaw("GET /chat/", ui)
	rt.HandleRaw("GET /chat.js", ui)
	return rt
}

// Intercept serves the agent API and chat console of chat (a Handler) in
// front of next — typically an httputil.ReverseProxy to the
// application — and passes every other request to next untouched.
func Intercept(chat, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if strings.HasPrefix(p, "/agent/") || p == "/chat" || p == "/chat.js" || p == "/chat.css" || strings.HasPrefix(p, "/chat/") {
			chat.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

type chatAPI struct {
	svc  *Service
	mode string // the auth scheme's Mode
}

// userKey keys the authenticated user in a request's context.
type userKey struct{}

// create starts a conversation for the authenticated user; a scheme that
// names no one (none, secret, a trusted request without the header) takes
// the body's user, as slot-machine does outside its hmac mode.
func (a *chatAPI) create(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Title string `json:"title"`
		User  string `json:"user"`
	}
	if err := httpjson.DecodeOptional(w, r, &in); err != nil {
		return err
	}
	if user, _ := r.Context().Value(userKey{}).(string); user != "" {
		in.User = user
	} else if a.mode == "hmac" || a.mode == "delegate" {
		in.User = "" // a scheme that names users: a body cannot claim one
	}
	c, err := a.svc.Create(r.Context(), NewConversation{Title: in.Title, User: in.User})
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusCreated, c)
	return nil
}

// list answers a JSON array of conversations, most recently updated first,
// as slot-machine's chat page reads it.
func (a *chatAPI) list(w http.ResponseWriter, r *http.Request) error {
	cs, err := a.svc.Conversations(r.Context())
	if err != nil {
		return err
	}
	if cs == nil {
		cs = []Conversation{}
	}
	httpjson.Write(w, http.StatusOK, cs)
	return nil
}

func (a *chatAPI) get(w http.ResponseWriter, r *http.Request) error {
	c, ms, err := a.svc.Conversation(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"conversation": c, "messages": ms})
	return nil
}

func (a *chatAPI) send(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Content string `json:"content"`
	}
	if err := httpjson.Decode(w, r, &in); err != nil {
		return err
	}
	res, err := a.svc.Send(r.Context(), r.PathValue("id"), in.Content)
	if errors.Is(err, ErrBusy) {
		// The message is stored; it just starts no run.
		httpjson.Write(w, http.StatusConflict, map[string]any{
			"error": httpjson.Detail{Code: ErrBusy.Code, Message: ErrBusy.Message}, "queued": false, "message_id": res.Message.ID,
		})
		return nil
	}
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusAccepted, map[string]any{"queued": res.Queued, "message_id": res.Message.ID})
	return nil
}

func (a *chatAPI) cancel(w http.ResponseWriter, r *http.Request) error {
	if err := a.svc.Cancel(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]bool{"ok": true})
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
func sseData(m Message) []byte {
	if m.Type == EventUser || m.Type == EventAssistant {
		b, _ := json.Marshal(map[string]string{"content": m.Content})
		return b
	}
	return []byte(m.Content)
}

// stream sends the conversation's messages as server-sent events — event
// name the message type, id the message ID — from after Last-Event-ID (or,
// without the header, ?after=N) on, then follows new ones. The header wins:
// a browser's EventSource reconnects to the URL it was opened with, ?after
// included, and says in the header how far it really got. Every message was
// stored before it is sent, so a reconnecting client loses nothing.
//
// Two rules keep slot-machine's chat page, which closes its stream at the
// first status event, on the run it is waiting for: the closing status of
// a run that a later user message superseded (see superseded) is not
// replayed; and the stream of a conversation whose run a stopped server
// left interrupted (no status event stored) starts with that status as an
// event without an id, as slot-machine's stream of a conversation with no
// run going ends.
func (a *chatAPI) stream(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id := r.PathValue("id")
	after, err := streamStart(r)
	if err != nil {
		return err
	}
	sub, err := a.svc.Subscribe(ctx, id)
	if err != nil {
		return err
	}
	defer sub.Close()
	// An unknown conversation is a 404, before the stream starts.
	conv, err := a.svc.Get(ctx, id)
	if err != nil {
		return err
	}
	ms, err := a.svc.Messages(ctx, id, after)
	if err != nil {
		return err
	}
	busy := func() bool {
		c, err := a.svc.Get(ctx, id)
		return err == nil && c.Status.Busy()
	}
	first := true
	httpjson.Stream(w, r, sub.C, sub.Poll(), func(w io.Writer, _ []byte) error {
		if ms == nil {
			if ms, err = a.svc.Messages(ctx, id, after); err != nil {
				return err // deleted, or the store is gone
			}
		}
		for i, m := range ms {
			after = m.ID
			if m.Type == EventStatus && superseded(ms[i+1:], busy) {
				continue
			}
			fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", m.ID, m.Type, sseData(m))
		}
		if first && conv.Status == StatusInterrupted && (len(ms) == 0 || ms[len(ms)-1].Type != EventStatus) {
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", EventStatus, closingStatus(conv.Status))
		}
		first, ms = false, nil
		return nil
	})
	return nil
}

// streamStart is the message ID a stream starts after: Last-Event-ID when
// the request has one, else ?after, else 0.
func streamStart(r *http.Request) (int64, error) {
	v, what := r.Header.Get("Last-Event-ID"), "Last-Event-ID"
	if v == "" {
		v, what = r.URL.Query().Get("after"), "after"
	}
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, httpjson.Invalid("invalid_after", "%s must be a message ID", what)
	}
	return n, nil
}

// superseded reports whether a status event, followed by later (the
// messages stored after it), closed a run that a new user message has
// superseded: a user message comes later, and a run started after it
// (something else was stored after it) or is starting (busy).
func superseded(later []Message, busy func() bool) bool {
	i := slices.IndexFunc(later, func(m Message) bool { return m.Type == EventUser })
	if i < 0 {
		return false
	}
	if slices.ContainsFunc(later[i+1:], func(m Message) bool { return m.Type != EventUser }) {
		return true
	}
	return busy()
}
