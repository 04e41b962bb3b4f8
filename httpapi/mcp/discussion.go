package mcp

import (
	"context"
	"fmt"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/httpapi/wire"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/store"
)

// AskSquadInput is the input of ask_squad.
type AskSquadInput struct {
	Message           string  `json:"message" jsonschema:"The question you put to the other agents of the squad."`                                                                // required, 1 to 10,000 characters
	RequiredResponses *int    `json:"required_responses,omitempty" jsonschema:"How many answers make a quorum and resolve the prompt; the server's default when absent."`         // 1 to 100; nil: 2
	TimeoutMinutes    *int    `json:"timeout_minutes,omitempty" jsonschema:"Minutes after which the prompt times out with the answers it has; the server's default when absent."` // 1 to 10,080; nil: 30
	TaskID            *string `json:"task_id,omitempty" jsonschema:"The task the question is about, if any."`                                                                     // optional, at most 200 characters
}

// AskOutput is the answer of ask_squad.
type AskOutput struct {
	PromptID string      `json:"prompt_id" jsonschema:"The prompt: wait_for_answers with it."` // same as Prompt.ID
	Prompt   wire.Prompt `json:"prompt" jsonschema:"The prompt as stored."`                    // the new prompt, collecting
}

// PromptsOutput is the answer of pending_prompts.
type PromptsOutput struct {
	// Prompts are the open prompts of others that the caller has not
	// answered, newest first, at most 100.
	Prompts []wire.Prompt `json:"prompts" jsonschema:"Open prompts of other agents that you have not answered: answer each with answer_prompt."`
}

// AnswerPromptInput is the input of answer_prompt.
type AnswerPromptInput struct {
	PromptID string `json:"prompt_id" jsonschema:"The prompt you answer, from pending_prompts."` // required; an open prompt of another agent
	Message  string `json:"message" jsonschema:"Your answer."`                                   // required, 1 to 10,000 characters
}

// AnswerOutput is the answer of answer_prompt.
type AnswerOutput struct {
	Ready             bool `json:"ready" jsonschema:"You can proceed: the prompt reached its quorum or timed out."` // the prompt is resolved (or timed out)
	ResponseCount     int  `json:"response_count" jsonschema:"Answers collected so far."`                           // answers collected, this one included
	RequiredResponses int  `json:"required_responses" jsonschema:"Answers the quorum needs."`                       // the prompt's quorum
}

// WaitInput is the input of wait_for_answers.
type WaitInput struct {
	PromptID       string `json:"prompt_id" jsonschema:"The prompt you asked with ask_squad."`                                                                                  // required
	TimeoutSeconds *int   `json:"timeout_seconds,omitempty" jsonschema:"The longest to wait for the prompt to resolve, from 0 (answer at once) to 60 seconds; 30 when absent."` // 0 to 60; nil: 30
}

// WaitOutput is the answer of wait_for_answers.
type WaitOutput struct {
	Ready            bool                `json:"ready" jsonschema:"You can proceed: the prompt reached its quorum or timed out; status says which."` // resolved or timed out
	Status           string              `json:"status" jsonschema:"pending, collecting, resolved, timed_out or cancelled."`                         // a wire.Prompt.Status value
	CollectedContext []wire.ContextEntry `json:"collected_context" jsonschema:"The answers so far: agent, message, time."`                           // oldest first; [] when none
}

// PostMessageInput is the input of post_message.
type PostMessageInput struct {
	Message   string  `json:"message" jsonschema:"What you say to the squad."`                                     // required, 1 to 10,000 characters
	ReplyToID *string `json:"reply_to_id,omitempty" jsonschema:"The squad-chat message this one answers, if any."` // optional; an existing squad-chat message's ID
	TaskRef   *string `json:"task_ref,omitempty" jsonschema:"The task the message is about, if any."`              // optional, at most 200 characters
}

// MessageOutput is the answer of post_message.
type MessageOutput struct {
	MessageID string           `json:"message_id" jsonschema:"The new message's ID."` // same as Message.ID
	Message   wire.ChatMessage `json:"message" jsonschema:"The message as stored."`   // as the squad-chat routes answer it
}

// ReadMessagesInput is the input of read_messages.
type ReadMessagesInput struct {
	// Limit is 1 to 500; 0 reads the latest 100.
	Limit int `json:"limit,omitempty" jsonschema:"How many of the latest messages to read; the server's default when absent."`
}

// MessagesOutput is the answer of read_messages.
type MessagesOutput struct {
	// Messages are newest first, prompts and answers included.
	Messages []wire.ChatMessage `json:"messages" jsonschema:"The squad chat's latest messages, prompts and answers included."`
}

// defaultWait is how long wait_for_answers waits when not told.
const defaultWait = 30 * time.Second

func (e *edge) discussionTools(s *sdk.Server) {
	add(e, s, &sdk.Tool{Name: "ask_squad", Title: "Ask the squad",
		Description: "Put a question to the other agents: it collects answers until required_responses of them make a quorum or it times out. Then wait_for_answers."},
		writes(discussion.ScopeWrite), e.askSquad)
	add(e, s, &sdk.Tool{Name: "pending_prompts", Title: "Questions waiting for you",
		Description: "The open questions of other agents that you have not answered yet."},
		anyKey, e.pendingPrompts)
	add(e, s, &sdk.Tool{Name: "answer_prompt", Title: "Answer a question",
		Description: "Answer another agent's open question, once."},
		writes(discussion.ScopeWrite), e.answerPrompt)
	add(e, s, &sdk.Tool{Name: "wait_for_answers", Title: "Wait for the squad's answers",
		Description: "Wait until your question has its quorum (or is closed), at most timeout_seconds, and read the answers."},
		anyKey, e.waitForAnswers)
	add(e, s, &sdk.Tool{Name: "post_message", Title: "Post to the squad chat",
		Description: "Say something in the squad chat, optionally as a reply to a message or about a task."},
		writes(discussion.ScopeWrite), e.postMessage)
	add(e, s, &sdk.Tool{Name: "read_messages", Title: "Read the squad chat",
		Description: "Read the squad chat's latest messages."},
		anyKey, e.readMessages)
}

func (e *edge) askSquad(ctx context.Context, in AskSquadInput) (AskOutput, string, error) {
	p, _, err := e.Discussion.Create(ctx, discussion.NewPrompt{TaskID: in.TaskID, PromptMessage: in.Message,
		RequiredResponses: in.RequiredResponses, TimeoutMinutes: in.TimeoutMinutes})
	if err != nil {
		return AskOutput{}, "", err
	}
	return AskOutput{PromptID: p.ID, Prompt: httpapi.ViewPrompt(p)},
		fmt.Sprintf("Asked the squad (prompt %s, %d answers needed within %d minutes). Call wait_for_answers.", p.ID, p.RequiredResponses, p.TimeoutMinutes), nil
}

func (e *edge) pendingPrompts(ctx context.Context, _ struct{}) (PromptsOutput, string, error) {
	ps, err := e.Discussion.List(ctx, discussion.ListQuery{Agent: identity.FromContext(ctx).Key.Name})
	if err != nil {
		return PromptsOutput{}, "", err
	}
	out := PromptsOutput{Prompts: make([]wire.Prompt, len(ps))}
	text := fmt.Sprintf("%d open questions wait for your answer.", len(ps))
	for i, p := range ps {
		out.Prompts[i] = httpapi.ViewPrompt(p)
		text += fmt.Sprintf("\n- %s from %s: %q", p.ID, p.RequesterAgent, p.PromptMessage)
	}
	return out, text, nil
}

func (e *edge) answerPrompt(ctx context.Context, in AnswerPromptInput) (AnswerOutput, string, error) {
	p, _, err := e.Discussion.Respond(ctx, in.PromptID, discussion.Response{Message: in.Message})
	if err != nil {
		return AnswerOutput{}, "", err
	}
	out := AnswerOutput{Ready: p.Ready(), ResponseCount: len(p.CollectedContext), RequiredResponses: p.RequiredResponses}
	return out, fmt.Sprintf("Answer recorded (%d of %d).", out.ResponseCount, out.RequiredResponses), nil
}

func (e *edge) waitForAnswers(ctx context.Context, in WaitInput) (WaitOutput, string, error) {
	wait := defaultWait
	if in.TimeoutSeconds != nil {
		if *in.TimeoutSeconds < 0 || *in.TimeoutSeconds > int(discussion.MaxWait/time.Second) {
			return WaitOutput{}, "", store.Errorf(store.ErrInvalid, "invalid_timeout_seconds", "timeout_seconds must be from 0 to %d", int(discussion.MaxWait/time.Second))
		}
		wait = time.Duration(*in.TimeoutSeconds) * time.Second
	}
	p, err := e.Discussion.Wait(ctx, in.PromptID, wait)
	if err != nil {
		return WaitOutput{}, "", err
	}
	v := httpapi.ViewPrompt(p)
	out := WaitOutput{Ready: p.Ready(), Status: v.Status, CollectedContext: v.CollectedContext}
	text := fmt.Sprintf("Prompt %s is %s with %d of %d answers.", p.ID, p.Status, len(p.CollectedContext), p.RequiredResponses)
	for _, c := range p.CollectedContext {
		text += fmt.Sprintf("\n- %s: %s", c.Agent, c.Message)
	}
	return out, text, nil
}

func (e *edge) postMessage(ctx context.Context, in PostMessageInput) (MessageOutput, string, error) {
	m, err := e.Discussion.PostMessage(ctx, discussion.Post{Message: in.Message, TaskRef: in.TaskRef, ReplyToID: in.ReplyToID})
	if err != nil {
		return MessageOutput{}, "", err
	}
	return MessageOutput{MessageID: m.ID, Message: httpapi.ViewMessage(m)}, fmt.Sprintf("Message %s posted.", m.ID), nil
}

func (e *edge) readMessages(ctx context.Context, in ReadMessagesInput) (MessagesOutput, string, error) {
	if in.Limit < 0 || in.Limit > discussion.MaxListLimit {
		return MessagesOutput{}, "", store.Errorf(store.ErrInvalid, "invalid_limit", "limit must be from 1 to %d", discussion.MaxListLimit)
	}
	ms, err := e.Discussion.Messages(ctx, in.Limit, "")
	if err != nil {
		return MessagesOutput{}, "", err
	}
	out := MessagesOutput{Messages: make([]wire.ChatMessage, len(ms))}
	text := fmt.Sprintf("%d messages.", len(ms))
	for i, m := range ms {
		out.Messages[i] = httpapi.ViewMessage(m)
		text += fmt.Sprintf("\n- %s: %s", m.AgentName, m.Message)
	}
	return out, text, nil
}
