package agentchat

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agorahq/agora/internal/httpjson"
	"github.com/agorahq/agora/store"
)

// HandlerOption configures Handler.
type HandlerOption func(*handlerConfig)

type handlerConfig struct {
	log  *slog.Logger
	auth func(*http.Request) (string, bool)
}

// WithLogger sets where unexpected errors are logged; the default is
// slog.Default().
func WithLogger(l *slog.Logger) HandlerOption { return func(c *handlerConfig) { c.log = l } }

// WithAuth guards the agent API: auth returns who the request is from and
// whether it may use the agent. Without it the API is open, as in the
// specification; see Secret for a shared-secret check.
func WithAuth(auth func(*http.Request) (user string, ok bool)) HandlerOption {
	return func(c *handlerConfig) { c.auth = auth }
}

// Handler returns the handler of the agent API of seeds/md under
// /agent/conversations, and of the chat console at /chat and /chat.js. It
// runs a coding agent on the host: protect it with WithAuth (or the host's
// own authentication). Mount it at "/agent/", "/chat", "/chat/" and
// "/chat.js", or put it in front of an application with Intercept.
func Handler(svc *Service, opts ...HandlerOption) http.Handler {
	cfg := handlerConfig{log: slog.Default()}
	for _, o := range opts {
		o(&cfg)
	}
	a := &chatAPI{svc: svc}
	rt := httpjson.NewRouter(cfg.log)
	open := func(fn func(http.ResponseWriter, *http.Request) error) func(http.ResponseWriter, *http.Request) error {
		if cfg.auth == nil {
			return fn
		}
		return func(w http.ResponseWriter, r *http.Request) error {
			if _, ok := cfg.auth(r); !ok {
				return errAuth
			}
			return fn(w, r)
		}
	}
	rt.Handle("POST", "/agent/conversations", open(a.create))
	rt.Handle("GET", "/agent/conversations", open(a.list))
	rt.Handle("GET", "/agent/conversations/{id}", open(a.get))
	rt.Handle("POST", "/agent/conversations/{id}/messages", open(a.send))
	rt.Handle("GET", "/agent/conversations/{id}/stream", open(a.stream))
	rt.Handle("POST", "/agent/conversations/{id}/cancel", open(a.cancel))
	rt.Handle("DELETE", "/agent/conversations/{id}", open(a.delete))
	ui := UI()
	rt.HandleRaw("GET /chat", ui)
	rt.HandleRaw("GET /chat/", ui)
	rt.HandleRaw("GET /chat.js", ui)
	return rt
}

var errAuth = store.Errorf(store.ErrUnauthorized, "unauthorized", "sign in to use the agent")

// Secret is a WithAuth check of a shared secret, presented in the
// header or in the cookie of the given names (the host sets the cookie; the
// secret is never served to the page). Compared in constant time.
func Secret(header, cookie, secret string) func(*http.Request) (string, bool) {
	want := sha256.Sum256([]byte(secret))
	match := func(v string) bool {
		got := sha256.Sum256([]byte(v))
		return v != "" && subtle.ConstantTimeCompare(got[:], want[:]) == 1
	}
	return func(r *http.Request) (string, bool) {
		if header != "" && match(r.Header.Get(header)) {
			return "secret", true
		}
		if c, err := r.Cookie(cookie); cookie != "" && err == nil && match(c.Value) {
			return "secret", true
		}
		return "", false
	}
}

// Intercept serves the agent API and chat console of chat (a Handler) in
// front of next — typically an httputil.ReverseProxy to the
// application — and passes every other request to next untouched.
func Intercept(chat, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if strings.HasPrefix(p, "/agent/") || p == "/chat" || p == "/chat.js" || strings.HasPrefix(p, "/chat/") {
			chat.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

type chatAPI struct {
	svc *Service
}

func (a *chatAPI) create(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Title string `json:"title"`
	}
	if err := httpjson.DecodeOptional(w, r, &in); err != nil {
		return err
	}
	c, err := a.svc.Create(r.Context(), in.Title)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusCreated, c)
	return nil
}

func (a *chatAPI) list(w http.ResponseWriter, r *http.Request) error {
	cs, err := a.svc.Conversations(r.Context())
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"conversations": cs})
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
			return httpjson.Invalid("invalid_after", "after must be a message ID")
		}
		after = n
	}
	sub, err := a.svc.Subscribe(ctx, id)
	if err != nil {
		return err
	}
	var hints <-chan []byte
	if sub != nil {
		defer sub.Close()
		hints = sub.C
	}
	ms, err := a.svc.Messages(ctx, id, after) // an unknown conversation is a 404, before the stream starts
	if err != nil {
		return err
	}
	httpjson.Stream(w, r, hints, time.Second, func(w io.Writer, _ []byte) error {
		if ms == nil {
			if ms, err = a.svc.Messages(ctx, id, after); err != nil {
				return err // deleted, or the store is gone
			}
		}
		for _, m := range ms {
			fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", m.ID, m.Type, sseData(m))
			after = m.ID
		}
		ms = nil
		return nil
	})
	return nil
}
