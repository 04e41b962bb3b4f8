package client

import (
	"context"
	"strings"
	"time"

	"github.com/agorahq/agora/discussion"
)

// Ask creates a discussion prompt (POST /api/discussion) and returns it
// with the squad-chat message that announces it. Nil numbers take the
// server's defaults.
func (c *Client) Ask(ctx context.Context, in discussion.NewPrompt) (discussion.Prompt, discussion.Message, error) {
	var out struct {
		Prompt discussion.Prompt  `json:"prompt"`
		Chat   discussion.Message `json:"chat"`
	}
	body := map[string]any{"requester_agent": in.RequesterAgent, "prompt_message": in.PromptMessage}
	if in.TaskID != nil {
		body["task_id"] = *in.TaskID
	}
	if in.RequiredResponses != nil {
		body["required_responses"] = *in.RequiredResponses
	}
	if in.TimeoutMinutes != nil {
		body["timeout_minutes"] = *in.TimeoutMinutes
	}
	err := c.do(ctx, "POST", "/api/discussion", body, &out)
	return out.Prompt, out.Chat, err
}

// AskSquad creates a discussion prompt; a required or timeoutMinutes that
// is not positive takes the server's default.
func (c *Client) AskSquad(ctx context.Context, requester, prompt string, required, timeoutMinutes int) (discussion.Prompt, error) {
	in := discussion.NewPrompt{RequesterAgent: requester, PromptMessage: prompt}
	if required > 0 {
		in.RequiredResponses = &required
	}
	if timeoutMinutes > 0 {
		in.TimeoutMinutes = &timeoutMinutes
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
	var out struct{ Prompts []discussion.Prompt }
	err := c.do(ctx, "GET", "/api/discussion"+query("status", strings.Join(statuses, ","), "agent", q.Agent, "task_id", q.TaskID, "limit", num(q.Limit)), nil, &out)
	return out.Prompts, err
}

// OpenPrompts lists the collecting prompts agent could answer.
func (c *Client) OpenPrompts(ctx context.Context, agent string) ([]discussion.Prompt, error) {
	return c.Prompts(ctx, discussion.ListQuery{Statuses: []discussion.Status{discussion.StatusCollecting}, Agent: agent})
}

// PromptView is a prompt as GET /api/discussion/{id} shows it: with its
// responses and whether the requester can proceed.
type PromptView struct {
	Prompt    discussion.Prompt    `json:"prompt"`
	Responses []discussion.Message `json:"responses"`
	// Ready is true once the prompt resolved or timed out.
	Ready bool `json:"ready"`
}

// Prompt returns a prompt with its responses. A positive wait (whole
// seconds, at most discussion.MaxWait) long-polls: the server answers when
// the prompt is ready or final, or when wait has passed.
func (c *Client) Prompt(ctx context.Context, id string, wait time.Duration) (PromptView, error) {
	var v PromptView
	err := c.do(ctx, "GET", "/api/discussion/"+esc(id)+query("wait", num(int(wait/time.Second))), nil, &v)
	return v, err
}

// Respond answers a prompt as agent. A prompt no longer collecting, or
// one agent already answered, is store.ErrConflict.
func (c *Client) Respond(ctx context.Context, promptID, agent, message string) error {
	return c.do(ctx, "POST", "/api/discussion/"+esc(promptID), map[string]any{"agent_name": agent, "message": message}, nil)
}

// ClosePrompt resolves (discussion.ActionResolve) or cancels
// (discussion.ActionCancel) an open prompt and returns it; a prompt that
// is already final is store.ErrConflict.
func (c *Client) ClosePrompt(ctx context.Context, id string, action discussion.Action) (discussion.Prompt, error) {
	var out struct{ Prompt discussion.Prompt }
	err := c.do(ctx, "PATCH", "/api/discussion/"+esc(id), map[string]any{"action": action}, &out)
	return out.Prompt, err
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

// PostMessage posts a plain message to the squad chat.
func (c *Client) PostMessage(ctx context.Context, agent, message string, isHuman bool) (discussion.Message, error) {
	var m discussion.Message
	err := c.do(ctx, "POST", "/api/squad-chat", map[string]any{"agent_name": agent, "message": message, "is_human": isHuman}, &m)
	return m, err
}

// Messages lists squad-chat messages newest first — plain messages, and
// the prompts and responses of discussions — at most limit of them (the
// server's default when 0), older than the message before when it is set.
func (c *Client) Messages(ctx context.Context, limit int, before string) ([]discussion.Message, error) {
	var out struct{ Messages []discussion.Message }
	err := c.do(ctx, "GET", "/api/squad-chat"+query("limit", num(limit), "before", before), nil, &out)
	return out.Messages, err
}
