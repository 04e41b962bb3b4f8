package client

import (
	"context"
	"strings"
	"time"

	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/httpapi/wire"
)

// Ask creates a discussion prompt (POST /api/discussion) and returns it
// with the squad-chat message that announces it. Nil numbers take the
// server's defaults.
func (c *Client) Ask(ctx context.Context, in discussion.NewPrompt) (discussion.Prompt, discussion.Message, error) {
	var out wire.CreatedPrompt
	body := wire.NewPrompt{TaskID: in.TaskID, RequesterAgent: in.RequesterAgent, PromptMessage: in.PromptMessage}
	if in.RequiredResponses != nil {
		body.RequiredResponses = wire.IntOf(*in.RequiredResponses)
	}
	if in.TimeoutMinutes != nil {
		body.TimeoutMinutes = wire.IntOf(*in.TimeoutMinutes)
	}
	err := c.do(ctx, "POST", "/api/discussion", body, &out)
	return promptOf(out.Prompt), messageOf(out.Chat), err
}

// Question is a discussion prompt in plain values, for AskSquad: the
// fields of discussion.NewPrompt without pointers. Zero fields are not
// sent and take the server's defaults: no task,
// discussion.DefaultRequired responses, discussion.DefaultTimeoutMinutes.
type Question struct {
	// TaskID ties the prompt to a task of the requester's.
	TaskID         string
	RequesterAgent string // who asks; may be empty when an API key names the asker
	PromptMessage  string // required: the question, at most discussion.MaxPromptLen characters
	// RequiredResponses is how many answers resolve the prompt.
	RequiredResponses int
	// TimeoutMinutes is how long the prompt collects answers.
	TimeoutMinutes int
}

// AskSquad creates a discussion prompt from q and returns it; Ask does the
// same from a discussion.NewPrompt and also returns the squad-chat message
// that announces it.
func (c *Client) AskSquad(ctx context.Context, q Question) (discussion.Prompt, error) {
	in := discussion.NewPrompt{RequesterAgent: q.RequesterAgent, PromptMessage: q.PromptMessage}
	if q.TaskID != "" {
		in.TaskID = &q.TaskID
	}
	if q.RequiredResponses != 0 {
		in.RequiredResponses = &q.RequiredResponses
	}
	if q.TimeoutMinutes != 0 {
		in.TimeoutMinutes = &q.TimeoutMinutes
	}
	p, _, err := c.Ask(ctx, in)
	return p, err
}

// Prompts lists discussion prompts newest first, filtered as q says: by
// statuses (pending and collecting when empty), by the agent that could
// answer them, by task ID, at most q.Limit of them (the server's default
// when 0).
func (c *Client) Prompts(ctx context.Context, q discussion.ListQuery) ([]discussion.Prompt, error) {
	statuses := make([]string, len(q.Statuses))
	for i, s := range q.Statuses {
		statuses[i] = string(s)
	}
	var out wire.PromptList
	err := c.do(ctx, "GET", "/api/discussion"+query("status", strings.Join(statuses, ","), "agent", q.Agent, "task_id", q.TaskID, "limit", num(q.Limit)), nil, &out)
	return all(out.Prompts, promptOf), err
}

// OpenPrompts lists the collecting prompts agent could answer.
func (c *Client) OpenPrompts(ctx context.Context, agent string) ([]discussion.Prompt, error) {
	return c.Prompts(ctx, discussion.ListQuery{Statuses: []discussion.Status{discussion.StatusCollecting}, Agent: agent})
}

// PromptView is a prompt as GET /api/discussion/{id} shows it
// (wire.PromptView): with its responses and whether the requester can
// proceed.
type PromptView struct {
	Prompt    discussion.Prompt    // as it stands now: an overdue prompt reads timed out
	Responses []discussion.Message // the response messages, oldest first
	// Ready is true once the prompt resolved or timed out.
	Ready bool
}

// Prompt returns a prompt with its responses. A positive wait (whole
// seconds, at most discussion.MaxWait) long-polls: the server answers when
// the prompt is ready or final, or when wait has passed.
func (c *Client) Prompt(ctx context.Context, id string, wait time.Duration) (PromptView, error) {
	var v wire.PromptView
	err := c.do(ctx, "GET", "/api/discussion/"+esc(id)+query("wait", num(int(wait/time.Second))), nil, &v)
	return PromptView{Prompt: promptOf(v.Prompt), Responses: all(v.Responses, messageOf), Ready: v.Ready}, err
}

// Respond answers a prompt as r.AgentName with r.Message; r.IsHuman marks
// a person's answer (false is not sent: an agent's). The answer is kept in
// the prompt's CollectedContext. A prompt no longer collecting, or one the
// agent already answered, is store.ErrConflict.
func (c *Client) Respond(ctx context.Context, promptID string, r discussion.Response) error {
	_, err := c.Answer(ctx, promptID, r)
	return err
}

// Answer answers a prompt as Respond does and returns the server's answer:
// the stored response, the prompt after it, and whether it resolved it.
func (c *Client) Answer(ctx context.Context, promptID string, r discussion.Response) (wire.RespondAnswer, error) {
	var out wire.RespondAnswer
	err := c.do(ctx, "POST", "/api/discussion/"+esc(promptID), wire.Respond{AgentName: r.AgentName, Message: r.Message, IsHuman: r.IsHuman}, &out)
	return out, err
}

// ClosePrompt resolves (discussion.ActionResolve) or cancels
// (discussion.ActionCancel) an open prompt and returns it; a prompt that
// is already final is store.ErrConflict.
func (c *Client) ClosePrompt(ctx context.Context, id string, action discussion.Action) (discussion.Prompt, error) {
	var out wire.CloseAnswer
	err := c.do(ctx, "PATCH", "/api/discussion/"+esc(id), wire.Close{Action: string(action)}, &out)
	return promptOf(out.Prompt), err
}

// WaitForDiscussion long-polls a prompt until it is ready or final (or ctx
// ends) and returns it with the collected context.
func (c *Client) WaitForDiscussion(ctx context.Context, promptID string) (discussion.Prompt, error) {
	for {
		v, err := c.Prompt(ctx, promptID, 30*time.Second)
		if err != nil {
			return discussion.Prompt{}, err
		}
		if v.Ready || v.Prompt.Final() {
			return v.Prompt, nil
		}
		if err := ctx.Err(); err != nil {
			return discussion.Prompt{}, err
		}
	}
}

// NewMessage is a plain squad-chat message, the body of POST
// /api/squad-chat. Zero fields are not sent: an agent's message, about no
// task, answering no message.
type NewMessage struct {
	AgentName string // the speaker; may be empty when an API key names it
	Message   string // required: at most discussion.MaxMessageLen characters
	// IsHuman marks a person's message.
	IsHuman bool
	// TaskRef names the task the message is about.
	TaskRef string
	// ReplyToID is the ID of the squad-chat message this one answers; the
	// server refuses an unknown one (store.ErrInvalid).
	ReplyToID string
}

// PostMessage posts a plain message to the squad chat and returns it as
// stored.
func (c *Client) PostMessage(ctx context.Context, m NewMessage) (discussion.Message, error) {
	var out wire.ChatMessage
	in := wire.PostMessage{AgentName: m.AgentName, Message: m.Message, IsHuman: m.IsHuman}
	if m.TaskRef != "" {
		in.TaskRef = &m.TaskRef
	}
	if m.ReplyToID != "" {
		in.ReplyToID = &m.ReplyToID
	}
	err := c.do(ctx, "POST", "/api/squad-chat", in, &out)
	return messageOf(out), err
}

// MessagesQuery pages GET /api/squad-chat. Zero fields are not sent.
type MessagesQuery struct {
	// Limit is how many messages at most; 0 takes the server's default,
	// at most discussion.MaxListLimit.
	Limit int
	// Before is a message's ID: only older messages are listed.
	Before string
}

// Messages lists squad-chat messages newest first — plain messages, and
// the prompts and responses of discussions — as q pages them.
func (c *Client) Messages(ctx context.Context, q MessagesQuery) ([]discussion.Message, error) {
	var out wire.MessageList
	err := c.do(ctx, "GET", "/api/squad-chat"+query("limit", num(q.Limit), "before", q.Before), nil, &out)
	return all(out.Messages, messageOf), err
}

// promptOf is the prompt p shows on the wire.
func promptOf(p wire.Prompt) discussion.Prompt {
	entries := all(p.CollectedContext, func(e wire.ContextEntry) discussion.ContextEntry { return discussion.ContextEntry(e) })
	return discussion.Prompt{
		ID: p.ID, TaskID: p.TaskID, RequesterAgent: p.RequesterAgent, PromptMessage: p.PromptMessage,
		RequiredResponses: p.RequiredResponses, TimeoutMinutes: p.TimeoutMinutes, Status: discussion.Status(p.Status),
		CollectedContext: entries, SquadChatID: p.SquadChatID, ResolvedAt: p.ResolvedAt, CreatedAt: p.CreatedAt,
		RequesterKey: p.RequesterKey,
	}
}

// messageOf is the squad-chat message m shows on the wire.
func messageOf(m wire.ChatMessage) discussion.Message {
	return discussion.Message{
		ID: m.ID, AgentName: m.AgentName, Message: m.Message, IsHuman: m.IsHuman, MessageType: discussion.MessageType(m.MessageType),
		DiscussionPromptID: m.DiscussionPromptID, TaskRef: m.TaskRef, ReplyToID: m.ReplyToID, CreatedAt: m.CreatedAt,
	}
}

// all is ws each mapped by of: nil for nil, as JSON's null decodes.
func all[W, D any](ws []W, of func(W) D) []D {
	if ws == nil {
		return nil
	}
	out := make([]D, len(ws))
	for i, w := range ws {
		out[i] = of(w)
	}
	return out
}
