package redisstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/agorahq/agora/discussion"
)

var _ discussion.Store = (*Store)(nil)

// Discussion keys, under the store's hash tag like every other:
//
//	prompts                zset (score 0) of prompt IDs, by ID
//	pdeadlines             zset of open prompt IDs scored by deadline (ms)
//	prompt:<id>            hash: the prompt's fields
//	pcontext:<id>          list of collected-context entries (JSON)
//	presponders:<id>       set of agents that answered
//	presponses:<id>        list of response message IDs
//	msgs                   zset (score 0) of squad-chat message IDs
//	msg:<id>               a message (JSON)
//
// Every key is built here, in Go. A script that reaches records by ID (a
// listing, a sweep) gets the kind's prefix (keyPrefix) as an argument and
// appends the ID, so the layout is written once.
var (
	discussionCreateScript   = newScript("discussion_create.lua")
	discussionRespondScript  = newScript("discussion_respond.lua")
	discussionCloseScript    = newScript("discussion_close.lua")
	discussionTimeoutScript  = newScript("discussion_timeout.lua")
	discussionListScript     = newScript("discussion_list.lua")
	discussionGetScript      = newScript("discussion_get.lua")
	discussionMessagesScript = newScript("discussion_messages.lua")
	discussionPostScript     = newScript("discussion_post.lua")
)

// timeoutBatch bounds one timeout script's work.
const timeoutBatch = 256

// The kinds of the discussion's per-record keys.
const (
	kindPrompt     = "prompt"
	kindContext    = "pcontext"
	kindResponders = "presponders"
	kindResponses  = "presponses"
	kindMsg        = "msg"
)

// keyPrefix is what every key of a kind of record starts with: the key of
// the record with ID id is keyPrefix(kind) + id.
func (s *Store) keyPrefix(kind string) string { return s.key(kind, "") }

func (s *Store) promptKey(id string) string     { return s.key(kindPrompt, id) }
func (s *Store) contextKey(id string) string    { return s.key(kindContext, id) }
func (s *Store) respondersKey(id string) string { return s.key(kindResponders, id) }
func (s *Store) responsesKey(id string) string  { return s.key(kindResponses, id) }
func (s *Store) msgKey(id string) string        { return s.key(kindMsg, id) }
func (s *Store) promptsKey() string             { return s.key("prompts") }
func (s *Store) deadlinesKey() string           { return s.key("pdeadlines") }
func (s *Store) msgsKey() string                { return s.key("msgs") }

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// CreatePrompt implements discussion.Store.
func (s *Store) CreatePrompt(ctx context.Context, p discussion.Prompt, m discussion.Message) error {
	msg, err := json.Marshal(m)
	if err != nil {
		return err
	}
	args := []any{p.ID,
		"id", p.ID, "requester", p.RequesterAgent, "message", p.PromptMessage,
		"required", p.RequiredResponses, "timeout", p.TimeoutMinutes, "status", string(p.Status),
		"squad_chat_id", p.SquadChatID, "created_at", stamp(p.CreatedAt),
		"deadline", p.Deadline().UnixMilli(), "deadline_at", stamp(p.Deadline()),
	}
	if p.TaskID != nil {
		args = append(args, "task_id", *p.TaskID)
	}
	if p.ResolvedAt != nil {
		args = append(args, "resolved_at", stamp(*p.ResolvedAt))
	}
	if p.RequesterKey != "" {
		args = append(args, "requester_key", p.RequesterKey)
	}
	args = append(args, "--", p.Deadline().UnixMilli(), m.ID, msg)
	err = discussionCreateScript.Run(ctx, s.client,
		[]string{s.promptKey(p.ID), s.promptsKey(), s.deadlinesKey(), s.msgKey(m.ID), s.msgsKey()}, args...).Err()
	return interpretError(ctx, err, nil)
}

// GetPrompt implements discussion.Store.
func (s *Store) GetPrompt(ctx context.Context, id string) (discussion.Prompt, error) {
	v, err := discussionGetScript.Run(ctx, s.client, []string{s.promptKey(id), s.contextKey(id)}).Result()
	if err != nil {
		return discussion.Prompt{}, interpretError(ctx, err, nil)
	}
	return decodePrompt(v)
}

// ListPrompts implements discussion.Store.
func (s *Store) ListPrompts(ctx context.Context, p discussion.ListParams) ([]discussion.Prompt, error) {
	if p.Limit <= 0 {
		return []discussion.Prompt{}, ctx.Err()
	}
	args := []any{s.keyPrefix(kindPrompt), s.keyPrefix(kindContext), s.keyPrefix(kindResponders), p.Limit, p.TaskID, p.Agent, p.Now.UnixMilli()}
	for _, st := range p.Statuses {
		args = append(args, string(st))
	}
	v, err := discussionListScript.Run(ctx, s.client, []string{s.promptsKey()}, args...).Slice()
	if err != nil {
		return nil, interpretError(ctx, err, nil)
	}
	out := make([]discussion.Prompt, 0, len(v))
	for _, item := range v {
		pr, err := decodePrompt(item)
		if err != nil {
			return nil, err
		}
		out = append(out, pr)
	}
	return out, nil
}

// Respond implements discussion.Store.
func (s *Store) Respond(ctx context.Context, p discussion.RespondParams) (discussion.Prompt, error) {
	entry, err := json.Marshal(p.Entry)
	if err != nil {
		return discussion.Prompt{}, err
	}
	msg, err := json.Marshal(p.Message)
	if err != nil {
		return discussion.Prompt{}, err
	}
	id := p.PromptID
	v, err := discussionRespondScript.Run(ctx, s.client,
		[]string{s.promptKey(id), s.contextKey(id), s.respondersKey(id), s.responsesKey(id), s.msgKey(p.Message.ID), s.msgsKey(), s.deadlinesKey()},
		id, p.Entry.Agent, entry, p.Entry.CreatedAt.UnixMilli(), stamp(p.Entry.CreatedAt), p.Message.ID, msg).Result()
	if err != nil {
		return discussion.Prompt{}, interpretError(ctx, err, nil)
	}
	return decodePrompt(v)
}

// ClosePrompt implements discussion.Store.
func (s *Store) ClosePrompt(ctx context.Context, id string, to discussion.Status, now time.Time) (discussion.Prompt, error) {
	v, err := discussionCloseScript.Run(ctx, s.client,
		[]string{s.promptKey(id), s.contextKey(id), s.deadlinesKey()},
		id, string(to), now.UnixMilli(), stamp(now)).Result()
	if err != nil {
		return discussion.Prompt{}, interpretError(ctx, err, nil)
	}
	return decodePrompt(v)
}

// TimeOut implements discussion.Store.
func (s *Store) TimeOut(ctx context.Context, now time.Time) ([]string, error) {
	var all []string
	for {
		ids, err := discussionTimeoutScript.Run(ctx, s.client, []string{s.deadlinesKey()}, s.keyPrefix(kindPrompt), now.UnixMilli(), timeoutBatch).StringSlice()
		if err != nil {
			return all, interpretError(ctx, err, nil)
		}
		all = append(all, ids...)
		if len(ids) < timeoutBatch {
			return all, nil
		}
	}
}

// ListResponses implements discussion.Store.
func (s *Store) ListResponses(ctx context.Context, promptID string) ([]discussion.Message, error) {
	n, err := s.client.Exists(ctx, s.promptKey(promptID)).Result()
	if err != nil {
		return nil, interpretError(ctx, err, nil)
	}
	if n == 0 {
		return nil, discussion.ErrPromptNotFound
	}
	return s.messages(ctx, s.responsesKey(promptID), "list")
}

// PostMessage implements discussion.Store.
func (s *Store) PostMessage(ctx context.Context, m discussion.Message) error {
	msg, err := json.Marshal(m)
	if err != nil {
		return err
	}
	replyKey, reply := s.msgKey(m.ID), "0"
	if m.ReplyToID != nil {
		replyKey, reply = s.msgKey(*m.ReplyToID), "1"
	}
	err = discussionPostScript.Run(ctx, s.client, []string{s.msgKey(m.ID), s.msgsKey(), replyKey}, m.ID, msg, reply).Err()
	return interpretError(ctx, err, nil)
}

// ListMessages implements discussion.Store.
func (s *Store) ListMessages(ctx context.Context, limit int, before string) ([]discussion.Message, error) {
	if limit <= 0 {
		return []discussion.Message{}, ctx.Err()
	}
	max := "+"
	if before != "" {
		max = "(" + before
	}
	return s.messages(ctx, s.msgsKey(), "zset", max, limit)
}

func (s *Store) messages(ctx context.Context, index, kind string, args ...any) ([]discussion.Message, error) {
	v, err := discussionMessagesScript.Run(ctx, s.client, []string{index}, append([]any{s.keyPrefix(kindMsg), kind}, args...)...).StringSlice()
	if err != nil {
		return nil, interpretError(ctx, err, nil)
	}
	out := make([]discussion.Message, 0, len(v))
	for _, raw := range v {
		var m discussion.Message
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			return nil, fmt.Errorf("redisstore: message: %w", err)
		}
		out = append(out, m)
	}
	return out, nil
}

// decodePrompt reads a script's {hash, context} reply.
func decodePrompt(v any) (discussion.Prompt, error) {
	pair, ok := v.([]any)
	if !ok || len(pair) != 2 {
		return discussion.Prompt{}, fmt.Errorf("redisstore: unexpected prompt reply %T", v)
	}
	r, err := toRecord(pair[0])
	if err != nil {
		return discussion.Prompt{}, err
	}
	if len(r) == 0 {
		return discussion.Prompt{}, discussion.ErrPromptNotFound
	}
	p := discussion.Prompt{
		ID:               r["id"],
		RequesterAgent:   r["requester"],
		PromptMessage:    r["message"],
		Status:           discussion.Status(r["status"]),
		SquadChatID:      r["squad_chat_id"],
		CollectedContext: []discussion.ContextEntry{},
		RequesterKey:     r["requester_key"],
	}
	if t, ok := r["task_id"]; ok {
		p.TaskID = &t
	}
	if p.RequiredResponses, err = strconv.Atoi(r["required"]); err != nil {
		return discussion.Prompt{}, fmt.Errorf("redisstore: prompt %s required: %w", p.ID, err)
	}
	if p.TimeoutMinutes, err = strconv.Atoi(r["timeout"]); err != nil {
		return discussion.Prompt{}, fmt.Errorf("redisstore: prompt %s timeout: %w", p.ID, err)
	}
	if p.CreatedAt, err = time.Parse(time.RFC3339Nano, r["created_at"]); err != nil {
		return discussion.Prompt{}, fmt.Errorf("redisstore: prompt %s created_at: %w", p.ID, err)
	}
	if s, ok := r["resolved_at"]; ok {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return discussion.Prompt{}, fmt.Errorf("redisstore: prompt %s resolved_at: %w", p.ID, err)
		}
		p.ResolvedAt = &t
	}
	entries, _ := pair[1].([]any)
	for _, e := range entries {
		raw, _ := e.(string)
		var c discussion.ContextEntry
		if err := json.Unmarshal([]byte(raw), &c); err != nil {
			return discussion.Prompt{}, fmt.Errorf("redisstore: prompt %s context: %w", p.ID, err)
		}
		p.CollectedContext = append(p.CollectedContext, c)
	}
	return p, nil
}
