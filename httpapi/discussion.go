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
	d := &discussionAPI{svc: svc}
	rt := newRouter(cfg)
	rt.mount(d.routes(), cfg.keys, nil)
	return rt
}

// routes is the table of the discussion and squad-chat routes: each row
// mounts its handler and describes it in the OpenAPI document.
func (d *discussionAPI) routes() []operation {
	return []operation{
		{id: "createPrompt", method: "POST", path: "/api/discussion", tag: tagDiscussion, summary: "Open a prompt", auth: keyIfRequired, scope: discussion.ScopeWrite,
			body: wire.NewPrompt{}, status: 201, resp: wire.CreatedPrompt{}, limited: true, fn: d.create},
		{id: "listPrompts", method: "GET", path: "/api/discussion", query: "status agent task_id limit:integer", tag: tagDiscussion, summary: "List prompts (status, agent, task_id, limit)", auth: keyIfRequired, status: 200,
			resp: wire.PromptList{}, fn: d.list},
		{id: "getPrompt", method: "GET", path: "/api/discussion/{id}", query: "wait:integer", tag: tagDiscussion, summary: "A prompt with its responses (wait: long poll)", auth: keyIfRequired, status: 200, resp: wire.PromptView{}, fn: d.get},
		{id: "respondToPrompt", method: "POST", path: "/api/discussion/{id}", tag: tagDiscussion, summary: "Respond to a prompt", auth: keyIfRequired, scope: discussion.ScopeWrite, body: wire.Respond{}, status: 201, resp: wire.RespondAnswer{}, limited: true, fn: d.respond},
		// The requester's key or a discussion:admin one: patch decides.
		{id: "closePrompt", method: "PATCH", path: "/api/discussion/{id}", tag: tagDiscussion, summary: "Close or cancel a prompt", auth: keyIfRequired,
			body: wire.Close{}, status: 200, resp: wire.CloseAnswer{}, limited: true, fn: d.patch},
		{id: "listSquadMessages", method: "GET", path: "/api/squad-chat", query: "limit:integer before", tag: tagDiscussion, summary: "Squad chat messages (limit, before)", auth: keyIfRequired, status: 200,
			resp: wire.MessageList{}, fn: d.messages},
		{id: "postSquadMessage", method: "POST", path: "/api/squad-chat", tag: tagDiscussion, summary: "Post to the squad chat", auth: keyIfRequired, scope: discussion.ScopeWrite, body: wire.PostMessage{}, status: 201, resp: wire.ChatMessage{}, limited: true, fn: d.post},
		{id: "streamSquadEvents", method: "GET", path: "/api/squad-chat/events", tag: tagDiscussion, summary: "Server-sent events of the squad chat", auth: keyIfRequired, status: 200, media: mediaEvents, fn: d.events},
	}
}

type discussionAPI struct {
	svc *discussion.Service
}

func (d *discussionAPI) create(w http.ResponseWriter, r *http.Request) error {
	var in wire.NewPrompt
	if err := httpjson.Decode(w, r, &in); err != nil {
		return err
	}
	required, err := httpjson.OptionalInt("required_responses", in.RequiredResponses.Raw())
	if err != nil {
		return err
	}
	timeout, err := httpjson.OptionalInt("timeout_minutes", in.TimeoutMinutes.Raw())
	if err != nil {
		return err
	}
	p, m, err := d.svc.Create(r.Context(), discussion.NewPrompt{
		TaskID: in.TaskID, RequesterAgent: in.RequesterAgent, PromptMessage: in.PromptMessage,
		RequiredResponses: required, TimeoutMinutes: timeout,
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
	httpjson.Write(w, http.StatusOK, wire.PromptList{Prompts: viewAll(ps, promptWire)})
	return nil
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
	view := promptWire(p)
	httpjson.Write(w, http.StatusOK, wire.PromptView{Prompt: view, Responses: viewAll(responses, chatMessageView), Ready: p.Ready(),
		Status: view.Status, ResponseCount: len(view.CollectedContext), RequiredResponses: p.RequiredResponses,
		CollectedContext: view.CollectedContext})
	return nil
}

func (d *discussionAPI) respond(w http.ResponseWriter, r *http.Request) error {
	var in wire.Respond
	if err := httpjson.Decode(w, r, &in); err != nil {
		return err
	}
	p, m, err := d.svc.Respond(r.Context(), r.PathValue("id"), discussion.Response{AgentName: in.AgentName, Message: in.Message, IsHuman: in.IsHuman})
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
	var in wire.Close
	if err := httpjson.Decode(w, r, &in); err != nil {
		return err
	}
	p, err := d.svc.Close(r.Context(), r.PathValue("id"), discussion.Action(in.Action))
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
	httpjson.Write(w, http.StatusOK, wire.MessageList{Messages: viewAll(ms, chatMessageView)})
	return nil
}

func (d *discussionAPI) post(w http.ResponseWriter, r *http.Request) error {
	var in wire.PostMessage
	if err := httpjson.Decode(w, r, &in); err != nil {
		return err
	}
	m, err := d.svc.PostMessage(r.Context(), discussion.Post{
		AgentName: in.AgentName, Message: in.Message, IsHuman: in.IsHuman, TaskRef: in.TaskRef, ReplyToID: in.ReplyToID,
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
		b, _ := json.Marshal(wire.SquadChanged{ID: string(hint)})
		_, err := fmt.Fprintf(w, "event: changed\ndata: %s\n\n", b)
		return err
	})
	return nil
}
