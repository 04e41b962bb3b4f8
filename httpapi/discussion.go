package httpapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/httpapi/wire"
	"github.com/agorahq/agora/internal/httpjson"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// Discussion returns the handler of the discussion-prompt and squad-chat
// routes of docs/discussion.md. Mount it for "/api/discussion",
// "/api/discussion/" and "/api/squad-chat".
//
// Like the specification, they take no API key unless the host asks for
// keys with WithKeys. Then every route needs a valid key; asking,
// answering and posting need discussion:write and count against the key's
// rate limit; and an identity is its key: the requester of a prompt, the
// author of an answer or a message is the key's name (a blank name takes
// it, another name is 403), the prompt remembers the key that asked, only
// that key or one with discussion:admin resolves or cancels it, and an
// answer or a message marked is_human needs discussion:admin.
func Discussion(svc *discussion.Service, opts ...DiscussionOption) http.Handler {
	cfg := newConfig(opts)
	d := &discussionAPI{svc: svc, keyed: cfg.keys != nil}
	rt := newRouter(cfg)
	write, read := slots.ScopeDiscussionWrite, slots.Scope("")
	rt.handle("POST", "/api/discussion", cfg.keyed(write, true, d.create))
	rt.handle("GET", "/api/discussion", cfg.keyed(read, false, d.list))
	rt.handle("GET", "/api/discussion/{id}", cfg.keyed(read, false, d.get))
	rt.handle("POST", "/api/discussion/{id}", cfg.keyed(write, true, d.respond))
	// The requester's key or a discussion:admin one: patch decides.
	rt.handle("PATCH", "/api/discussion/{id}", cfg.keyed(read, true, d.patch))
	rt.handle("GET", "/api/squad-chat", cfg.keyed(read, false, d.messages))
	rt.handle("POST", "/api/squad-chat", cfg.keyed(write, true, d.post))
	rt.handle("GET", "/api/squad-chat/events", cfg.keyed(read, false, d.events))
	return rt
}

type discussionAPI struct {
	svc   *discussion.Service
	keyed bool // WithKeys: identities are keys
}

// actor is the name a request acts under and whether it may speak as a
// human. Without keys it is what the body says. With keys it is the key's
// name: a blank named takes it, another name is 403; and human needs
// discussion:admin.
func (d *discussionAPI) actor(r *http.Request, field, named string, human bool) (string, error) {
	if !d.keyed {
		return named, nil
	}
	k := principal(r)
	if n := strings.TrimSpace(named); n != "" && n != k.Name {
		return "", store.Errorf(store.ErrForbidden, "not_your_name", "this API key acts as %q; %s %q names someone else", k.Name, field, n)
	}
	if human {
		if err := requireScope(k, slots.ScopeDiscussionAdmin); err != nil {
			return "", err
		}
	}
	return k.Name, nil
}

func (d *discussionAPI) create(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		TaskID            *string         `json:"task_id"`
		RequesterAgent    string          `json:"requester_agent"`
		PromptMessage     string          `json:"prompt_message"`
		RequiredResponses json.RawMessage `json:"required_responses"`
		TimeoutMinutes    json.RawMessage `json:"timeout_minutes"`
	}
	if err := httpjson.Decode(w, r, &in); err != nil {
		return err
	}
	required, err := httpjson.OptionalInt("required_responses", in.RequiredResponses)
	if err != nil {
		return err
	}
	timeout, err := httpjson.OptionalInt("timeout_minutes", in.TimeoutMinutes)
	if err != nil {
		return err
	}
	requester, err := d.actor(r, "requester_agent", in.RequesterAgent, false)
	if err != nil {
		return err
	}
	p, m, err := d.svc.Create(r.Context(), discussion.NewPrompt{
		TaskID: in.TaskID, RequesterAgent: requester, PromptMessage: in.PromptMessage,
		RequiredResponses: required, TimeoutMinutes: timeout, RequesterKey: principal(r).ID,
	})
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusCreated, wire.CreatedPrompt{Prompt: promptWire(p), Chat: chatMessageView(m)})
	return nil
}

func (d *discussionAPI) list(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var statuses []discussion.Status
	for _, v := range q["status"] {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				statuses = append(statuses, discussion.Status(s))
			}
		}
	}
	limit, err := httpjson.QueryInt(r, "limit")
	if err != nil {
		return err
	}
	if q.Has("limit") && limit == 0 {
		return httpjson.Invalid("invalid_limit", "limit must be from 1 to %d", discussion.MaxListLimit)
	}
	ps, err := d.svc.List(r.Context(), discussion.ListQuery{Statuses: statuses, Agent: q.Get("agent"), TaskID: q.Get("task_id"), Limit: limit})
	if err != nil {
		return err
	}
	out := wire.PromptList{Prompts: make([]wire.Prompt, len(ps))}
	for i, p := range ps {
		out.Prompts[i] = promptWire(p)
	}
	httpjson.Write(w, http.StatusOK, out)
	return nil
}

// promptView is GET /api/discussion/{id}: the prompt with what a waiting
// requester needs at the top level.
type promptView struct {
	Prompt            discussion.Prompt         `json:"prompt"`
	Responses         []discussion.Message      `json:"responses"`
	Ready             bool                      `json:"ready"`
	Status            discussion.Status         `json:"status"`
	ResponseCount     int                       `json:"responseCount"`
	RequiredResponses int                       `json:"requiredResponses"`
	CollectedContext  []discussion.ContextEntry `json:"collectedContext"`
}

func (d *discussionAPI) get(w http.ResponseWriter, r *http.Request) error {
	wait, err := httpjson.WaitParam(r, discussion.MaxWait)
	if err != nil {
		return err
	}
	p, err := d.svc.Wait(r.Context(), r.PathValue("id"), wait)
	if err != nil {
		return err
	}
	responses, err := d.svc.Responses(r.Context(), p.ID)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, promptView{
		Prompt: p, Responses: responses, Ready: p.Ready(), Status: p.Status,
		ResponseCount: len(p.CollectedContext), RequiredResponses: p.RequiredResponses,
		CollectedContext: p.CollectedContext,
	})
	return nil
}

func (d *discussionAPI) respond(w http.ResponseWriter, r *http.Request) error {
	var in wire.Respond
	if err := httpjson.Decode(w, r, &in); err != nil {
		return err
	}
	agent, err := d.actor(r, "agent_name", in.AgentName, in.IsHuman)
	if err != nil {
		return err
	}
	p, m, err := d.svc.Respond(r.Context(), r.PathValue("id"), discussion.Response{AgentName: agent, Message: in.Message, IsHuman: in.IsHuman})
	if err != nil {
		return err
	}
	msg := chatMessageView(m)
	httpjson.Write(w, http.StatusCreated, wire.RespondAnswer{
		Response: msg, Prompt: promptWire(p), Ready: p.Ready(), Chat: msg,
		ResponseCount: len(p.CollectedContext), RequiredResponses: p.RequiredResponses,
	})
	return nil
}

// chatMessageView is m as the wire shows it.
func chatMessageView(m discussion.Message) wire.ChatMessage {
	return wire.ChatMessage{
		ID: m.ID, AgentName: m.AgentName, Message: m.Message, IsHuman: m.IsHuman, MessageType: string(m.MessageType),
		DiscussionPromptID: m.DiscussionPromptID, TaskRef: m.TaskRef, ReplyToID: m.ReplyToID, CreatedAt: m.CreatedAt,
	}
}

// promptWire is p as the wire shows it.
func promptWire(p discussion.Prompt) wire.Prompt {
	entries := make([]wire.ContextEntry, len(p.CollectedContext))
	for i, e := range p.CollectedContext {
		entries[i] = wire.ContextEntry(e)
	}
	return wire.Prompt{
		ID: p.ID, TaskID: p.TaskID, RequesterAgent: p.RequesterAgent, PromptMessage: p.PromptMessage,
		RequiredResponses: p.RequiredResponses, TimeoutMinutes: p.TimeoutMinutes, Status: string(p.Status),
		CollectedContext: entries, SquadChatID: p.SquadChatID, ResolvedAt: p.ResolvedAt, CreatedAt: p.CreatedAt,
		RequesterKey: p.RequesterKey,
	}
}

func (d *discussionAPI) patch(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Action discussion.Action `json:"action"`
	}
	if err := httpjson.Decode(w, r, &in); err != nil {
		return err
	}
	by := discussion.Closer{Any: true}
	if d.keyed {
		k := principal(r)
		by = discussion.Closer{KeyID: k.ID, Any: k.Has(slots.ScopeDiscussionAdmin)}
	}
	p, err := d.svc.CloseBy(r.Context(), r.PathValue("id"), in.Action, by)
	if err != nil {
		return err
	}
	view := promptWire(p)
	httpjson.Write(w, http.StatusOK, wire.CloseAnswer{Prompt: view, CollectedContext: view.CollectedContext})
	return nil
}

func (d *discussionAPI) messages(w http.ResponseWriter, r *http.Request) error {
	limit, err := httpjson.QueryInt(r, "limit")
	if err != nil {
		return err
	}
	if r.URL.Query().Has("limit") && limit == 0 {
		return httpjson.Invalid("invalid_limit", "limit must be from 1 to %d", discussion.MaxListLimit)
	}
	ms, err := d.svc.Messages(r.Context(), limit, r.URL.Query().Get("before"))
	if err != nil {
		return err
	}
	out := wire.MessageList{Messages: make([]wire.ChatMessage, len(ms))}
	for i, m := range ms {
		out.Messages[i] = chatMessageView(m)
	}
	httpjson.Write(w, http.StatusOK, out)
	return nil
}

func (d *discussionAPI) post(w http.ResponseWriter, r *http.Request) error {
	var in wire.PostMessage
	if err := httpjson.Decode(w, r, &in); err != nil {
		return err
	}
	agent, err := d.actor(r, "agent_name", in.AgentName, in.IsHuman)
	if err != nil {
		return err
	}
	m, err := d.svc.PostMessage(r.Context(), discussion.Post{
		AgentName: agent, Message: in.Message, IsHuman: in.IsHuman, TaskRef: in.TaskRef, ReplyToID: in.ReplyToID,
	})
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusCreated, chatMessageView(m))
	return nil
}

// events streams a hint for every change of the squad chat or its prompts
// as server-sent events ("changed", data {"id": prompt ID or "chat"}), so a
// live view re-reads what changed. The first event, with an empty id, is
// sent at once.
func (d *discussionAPI) events(w http.ResponseWriter, r *http.Request) error {
	sub, err := d.svc.SubscribeSquad(r.Context())
	if err != nil {
		return err
	}
	defer sub.Close()
	httpjson.Stream(w, r, sub.C, sub.Poll(), func(w io.Writer, hint []byte) error {
		b, _ := json.Marshal(map[string]string{"id": string(hint)})
		_, err := fmt.Fprintf(w, "event: changed\ndata: %s\n\n", b)
		return err
	})
	return nil
}
