package httpapi

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

	"github.com/agorahq/agora/agentchat"
	"github.com/agorahq/agora/httpapi/chatauth"
	"github.com/agorahq/agora/internal/httpjson"
)

// WithChatAuth guards AgentChat's agent API with s (see package
// chatauth). Without it the API is open, as in docs/agentchat.md: keep
// it on a loopback address (chatauth.Config.CheckExposure) or behind the
// host's own authentication. The chat takes no API keys, so WithKeys and
// WithLimiter are no ChatOptions.
func WithChatAuth(s chatauth.Scheme) ChatOption {
	return chatOptionFunc(func(c *config) { c.chat.auth = s })
}

// WithChatLook sets what GET /chat/config tells slot-machine's chat page
// to show: its title (without this option "Agora") and accent colour (any
// CSS colour; empty keeps the page's own), and css, served at /chat.css
// for the page to load (empty serves an empty sheet).
func WithChatLook(title, accent, css string) ChatOption {
	return chatOptionFunc(func(c *config) {
		c.chat.look = &chatLook{ChatTitle: title, ChatAccent: accent}
		c.chat.css = css
	})
}

// chatConfig is AgentChat's part of config.
type chatConfig struct {
	auth chatauth.Scheme
	look *chatLook // nil: Agora's; AuthMode and AuthSecret come from auth
	css  string
}

// chatLook is GET /chat/config: the settings slot-machine's chat page
// reads when it loads. AuthMode is "none" for an open API, "hmac" and
// "trusted" for the signed-user header schemes (the page then sends
// X-SlotMachine-User), or the name of another scheme; AuthSecret is the
// key the page signs with, served only when the host chose so (see
// chatauth.SignedUser).
type chatLook struct {
	AuthMode   string `json:"authMode"`
	AuthSecret string `json:"authSecret"`
	ChatTitle  string `json:"chatTitle"`
	ChatAccent string `json:"chatAccent"`
}

// AgentChat returns the handler of the agent API of docs/agentchat.md
// under /agent/conversations, of the chat console at /chat and /chat.js,
// and of /chat/config and /chat.css for slot-machine's chat page. It runs
// a coding agent on the host: guard it with WithChatAuth (or the host's
// own authentication); /chat, /chat.js, /chat/config and /chat.css stay
// open, as in slot-machine. Mount it at "/agent/", "/chat", "/chat/",
// "/chat.js" and "/chat.css", or put it in front of an application with
// InterceptChat. WithLogger and WithChatLook apply too.
func AgentChat(svc *agentchat.Service, opts ...ChatOption) http.Handler {
	cfg := newConfig(opts)
	auth := cfg.chat.auth
	if auth.Mode == "" { // a Scheme built by hand
		auth.Mode = "none"
		if auth.Authenticate != nil {
			auth.Mode = "custom"
		}
	}
	look := chatLook{ChatTitle: "Agora"}
	if cfg.chat.look != nil {
		look = *cfg.chat.look
	}
	look.AuthMode, look.AuthSecret = auth.Mode, auth.PageSecret
	a := &chatAPI{svc: svc, auth: auth, log: cfg.log}
	rt := newRouter(cfg)
	rt.Handle("POST", "/agent/conversations", a.guard(a.create))
	rt.Handle("GET", "/agent/conversations", a.guard(a.list))
	rt.Handle("GET", "/agent/conversations/{id}", a.guard(a.get))
	rt.Handle("POST", "/agent/conversations/{id}/messages", a.guard(a.send))
	rt.Handle("GET", "/agent/conversations/{id}/stream", a.guard(a.stream))
	rt.Handle("POST", "/agent/conversations/{id}/cancel", a.guard(a.cancel))
	rt.Handle("DELETE", "/agent/conversations/{id}", a.guard(a.delete))
	rt.Handle("GET", "/chat/config", func(w http.ResponseWriter, r *http.Request) error {
		httpjson.Write(w, http.StatusOK, look)
		return nil
	})
	css := cfg.chat.css
	rt.HandleRaw("GET /chat.css", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		_, _ = io.WriteString(w, css)
	}))
	page := chatPage()
	rt.HandleRaw("GET /chat", page)
	rt.HandleRaw("GET /chat/", page)
	rt.HandleRaw("GET /chat.js", page)
	return rt
}

// InterceptChat serves the agent API and chat console of chat (an
// AgentChat handler) in front of next — typically an
// httputil.ReverseProxy to the application — and passes every other
// request to next untouched.
func InterceptChat(chat, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if strings.HasPrefix(p, "/agent/") || p == "/chat" || p == "/chat.js" || p == "/chat.css" || strings.HasPrefix(p, "/chat/") {
			chat.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// The bodies of the agent API, which the OpenAPI document describes too.
type (
	// chatCreate is the body of POST /agent/conversations.
	chatCreate struct {
		Title string `json:"title,omitempty"`
		User  string `json:"user,omitempty"`
	}
	// chatThread answers GET /agent/conversations/{id}.
	chatThread struct {
		Conversation agentchat.Conversation `json:"conversation"`
		Messages     []agentchat.Message    `json:"messages"`
	}
	// chatSend is the body of POST /agent/conversations/{id}/messages.
	chatSend struct {
		Content string `json:"content" openapi:"required"`
	}
	// chatSent answers a message that started a run or was queued.
	chatSent struct {
		Queued    bool  `json:"queued"`
		MessageID int64 `json:"message_id"`
	}
	// chatBusy answers a message to a conversation whose agent works: it
	// is stored, and starts no run (Queued is always false).
	chatBusy struct {
		Error     httpjson.Detail `json:"error"`
		Queued    bool            `json:"queued"`
		MessageID int64           `json:"message_id"`
	}
	// chatText is the stream's data of a text message.
	chatText struct {
		Content string `json:"content"`
	}
)

type chatAPI struct {
	svc  *agentchat.Service
	auth chatauth.Scheme
	log  *slog.Logger
}

// guard runs fn for the requests the chat's scheme lets in, with the user
// it names in the request's context.
func (a *chatAPI) guard(fn func(http.ResponseWriter, *http.Request) error) func(http.ResponseWriter, *http.Request) error {
	if a.auth.Authenticate == nil {
		return fn
	}
	return func(w http.ResponseWriter, r *http.Request) error {
		user, err := a.auth.Authenticate(r)
		if errors.Is(err, chatauth.ErrUnavailable) {
			// What went wrong with the application stays in the log.
			a.log.WarnContext(r.Context(), "agent chat auth", "err", err)
			w.Header().Set("Retry-After", strconv.Itoa(int(httpjson.UnavailableRetryAfter/time.Second)))
			httpjson.Write(w, http.StatusServiceUnavailable, httpjson.ErrorBody("auth_unavailable",
				"the application could not say whether you may use the agent; try again later"))
			return nil
		}
		if err != nil {
			return err
		}
		return fn(w, r.WithContext(context.WithValue(r.Context(), chatUserKey{}, user)))
	}
}

// chatUserKey keys the user the chat's scheme named in a request's
// context.
type chatUserKey struct{}

// create starts a conversation for the authenticated user; when the
// scheme names no one (none, secret, a trusted request without the
// header) it takes the body's user, as slot-machine does outside its hmac
// mode.
func (a *chatAPI) create(w http.ResponseWriter, r *http.Request) error {
	var in chatCreate
	if err := httpjson.DecodeOptional(w, r, &in); err != nil {
		return err
	}
	if user, _ := r.Context().Value(chatUserKey{}).(string); user != "" {
		in.User = user
	} else if a.auth.NamesUsers() {
		in.User = "" // a scheme that names users: a body cannot claim one
	}
	c, err := a.svc.Create(r.Context(), agentchat.NewConversation{Title: in.Title, User: in.User})
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusCreated, c)
	return nil
}

// list answers a JSON array of conversations, most recently updated first,
// as slot-machine's chat page reads it: a page of at most limit (default
// agentchat.DefaultConversationsLimit), the next one after the ID before.
func (a *chatAPI) list(w http.ResponseWriter, r *http.Request) error {
	limit, err := httpjson.QueryInt(r, "limit")
	if err != nil {
		return err
	}
	if r.URL.Query().Has("limit") && limit == 0 {
		return httpjson.Invalid("invalid_limit", "limit must be from 1 to %d", agentchat.MaxConversationsLimit)
	}
	cs, err := a.svc.Conversations(r.Context(), agentchat.ConversationsQuery{Limit: limit, Before: r.URL.Query().Get("before")})
	if err != nil {
		return err
	}
	if cs == nil {
		cs = []agentchat.Conversation{}
	}
	httpjson.Write(w, http.StatusOK, cs)
	return nil
}

func (a *chatAPI) get(w http.ResponseWriter, r *http.Request) error {
	c, ms, err := a.svc.Conversation(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, chatThread{Conversation: c, Messages: ms})
	return nil
}

func (a *chatAPI) send(w http.ResponseWriter, r *http.Request) error {
	var in chatSend
	if err := httpjson.Decode(w, r, &in); err != nil {
		return err
	}
	res, err := a.svc.Send(r.Context(), r.PathValue("id"), in.Content)
	if errors.Is(err, agentchat.ErrBusy) {
		// The message is stored; it just starts no run.
		httpjson.Write(w, http.StatusConflict, chatBusy{
			Error: httpjson.Detail{Code: agentchat.ErrBusy.Code, Message: agentchat.ErrBusy.Message}, MessageID: res.Message.ID,
		})
		return nil
	}
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusAccepted, chatSent{Queued: res.Queued, MessageID: res.Message.ID})
	return nil
}

func (a *chatAPI) cancel(w http.ResponseWriter, r *http.Request) error {
	if err := a.svc.Cancel(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, ok{OK: true})
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
		b, _ := json.Marshal(chatText{Content: m.Content})
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
			if m.Type == agentchat.EventStatus && superseded(ms[i+1:], busy) {
				continue
			}
			fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", m.ID, m.Type, sseData(m))
		}
		if first && conv.Status == agentchat.StatusInterrupted && (len(ms) == 0 || ms[len(ms)-1].Type != agentchat.EventStatus) {
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", agentchat.EventStatus, conv.Status.Closing().Data())
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
func superseded(later []agentchat.Message, busy func() bool) bool {
	i := slices.IndexFunc(later, func(m agentchat.Message) bool { return m.Type == agentchat.EventUser })
	if i < 0 {
		return false
	}
	if slices.ContainsFunc(later[i+1:], func(m agentchat.Message) bool { return m.Type != agentchat.EventUser }) {
		return true
	}
	return busy()
}
