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
	"github.com/agorahq/agora/httpapi/wire"
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
		c.chat.look = &wire.ChatLook{ChatTitle: title, ChatAccent: accent}
		c.chat.css = css
	})
}

// chatConfig is AgentChat's part of config.
type chatConfig struct {
	auth chatauth.Scheme
	look *wire.ChatLook // nil: Agora's; AuthMode and AuthSecret come from auth
	css  string
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
	look := wire.ChatLook{ChatTitle: "Agora"}
	if cfg.chat.look != nil {
		look = *cfg.chat.look
	}
	look.AuthMode, look.AuthSecret = auth.Mode, auth.PageSecret
	a := &chatAPI{svc: svc, auth: auth, log: cfg.log, look: look}
	rt := newRouter(cfg)
	rt.mount(a.routes(), nil, a.guard)
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

// viewConversation is c on the wire.
func viewConversation(c agentchat.Conversation) wire.Conversation {
	return wire.Conversation{ID: c.ID, Title: c.Title, SessionID: c.SessionID, User: c.User, Status: string(c.Status),
		CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
}

type chatAPI struct {
	svc  *agentchat.Service
	auth chatauth.Scheme
	log  *slog.Logger
	look wire.ChatLook // GET /chat/config's answer
}

// routes is the table of the agent chat's API: each row mounts its
// handler and describes it in the OpenAPI document. The pages (/chat,
// /chat.js, /chat.css) are not in it.
func (a *chatAPI) routes() []operation {
	return []operation{
		{id: "createConversation", method: "POST", path: "/agent/conversations", optionalBody: true, tag: tagChat, summary: "Open a conversation", auth: chatAuth,
			body: wire.ChatCreate{}, status: 201, resp: wire.Conversation{}, fn: a.create},
		{id: "listConversations", method: "GET", path: "/agent/conversations", query: "limit:integer before", tag: tagChat, summary: "List conversations (a page: limit, before the last one's ID)", auth: chatAuth, status: 200, resp: []wire.Conversation{}, fn: a.list},
		{id: "getConversation", method: "GET", path: "/agent/conversations/{id}", tag: tagChat, summary: "A conversation with its messages", auth: chatAuth, status: 200,
			resp: wire.ChatThread{}, fn: a.get},
		{id: "sendMessage", method: "POST", path: "/agent/conversations/{id}/messages", tag: tagChat, summary: "Send a message to the agent", auth: chatAuth,
			body: wire.ChatSend{}, status: 202, resp: wire.ChatSent{}, other: map[int]any{409: wire.ChatBusy{}}, fn: a.send},
		{id: "streamConversation", method: "GET", path: "/agent/conversations/{id}/stream", query: "after:integer", tag: tagChat, summary: "Server-sent events of a conversation", auth: chatAuth, status: 200, media: mediaEvents, fn: a.stream},
		{id: "cancelRun", method: "POST", path: "/agent/conversations/{id}/cancel", tag: tagChat, summary: "Stop the agent's run", auth: chatAuth, status: 200, resp: wire.OK{}, fn: a.cancel},
		{id: "deleteConversation", method: "DELETE", path: "/agent/conversations/{id}", tag: tagChat, summary: "Delete a conversation", auth: chatAuth, status: 204, fn: a.delete},
		{id: "getChatConfig", method: "GET", path: "/chat/config", tag: tagChat, summary: "The chat page's look", auth: public, status: 200, resp: wire.ChatLook{}, fn: a.config},
	}
}

// config answers GET /chat/config: the chat page's look.
func (a *chatAPI) config(w http.ResponseWriter, _ *http.Request) error {
	httpjson.Write(w, http.StatusOK, a.look)
	return nil
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
	var in wire.ChatCreate
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
	httpjson.Write(w, http.StatusCreated, viewConversation(c))
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
	httpjson.Write(w, http.StatusOK, viewAll(cs, viewConversation))
	return nil
}

func (a *chatAPI) get(w http.ResponseWriter, r *http.Request) error {
	c, ms, err := a.svc.Conversation(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	out := wire.ChatThread{Conversation: viewConversation(c)}
	if ms != nil {
		out.Messages = make([]wire.ConversationMessage, len(ms))
	}
	for i, m := range ms {
		out.Messages[i] = wire.ConversationMessage{ID: m.ID, ConversationID: m.ConversationID, Type: string(m.Type), Content: m.Content, CreatedAt: m.CreatedAt}
	}
	httpjson.Write(w, http.StatusOK, out)
	return nil
}

func (a *chatAPI) send(w http.ResponseWriter, r *http.Request) error {
	var in wire.ChatSend
	if err := httpjson.Decode(w, r, &in); err != nil {
		return err
	}
	res, err := a.svc.Send(r.Context(), r.PathValue("id"), in.Content)
	if errors.Is(err, agentchat.ErrBusy) {
		// The message is stored; it just starts no run.
		httpjson.Write(w, http.StatusConflict, wire.ChatBusy{
			Error: wire.Detail{Code: agentchat.ErrBusy.Code, Message: agentchat.ErrBusy.Message}, MessageID: res.Message.ID,
		})
		return nil
	}
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusAccepted, wire.ChatSent{Queued: res.Queued, MessageID: res.Message.ID})
	return nil
}

func (a *chatAPI) cancel(w http.ResponseWriter, r *http.Request) error {
	if err := a.svc.Cancel(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, wire.OK{OK: true})
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
		b, _ := json.Marshal(wire.ChatText{Content: m.Content})
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
	// started reports whether a run started after the user message
	// userID: the conversation is busy now or, when it is not, something
	// other than a user message was stored after it. A run that ended
	// between the messages' read and this check stored its events before
	// its status left busy, so the second read finds them.
	started := func(userID int64) bool {
		if c, err := a.svc.Get(ctx, id); err == nil && c.Status.Busy() {
			return true
		}
		later, err := a.svc.Messages(ctx, id, userID)
		return err == nil && slices.ContainsFunc(later, func(m agentchat.Message) bool { return m.Type != agentchat.EventUser })
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
			if m.Type == agentchat.EventStatus && superseded(ms[i+1:], started) {
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
// (something else was stored after it, or started says so: later may have
// been read before the run stored anything).
func superseded(later []agentchat.Message, started func(userID int64) bool) bool {
	i := slices.IndexFunc(later, func(m agentchat.Message) bool { return m.Type == agentchat.EventUser })
	if i < 0 {
		return false
	}
	if slices.ContainsFunc(later[i+1:], func(m agentchat.Message) bool { return m.Type != agentchat.EventUser }) {
		return true
	}
	return started(later[i].ID)
}
