package redisstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agorahq/agora/agentchat"
)

var _ agentchat.Store = (*Store)(nil)

// agentchat keys, under the store's hash tag:
//
//	conv:<id>        hash: id, title, session_id, user, status, created_at, updated_at, updated_ms, lease_ms,
//	                 and cancel ("1") while a cancel requested of its run stands
//	chatmsgs:<id>    zset of messages scored by ID, a member "<ID> <JSON>"
//	chatseq          the last message ID, store-wide
//	convmsgs:<id>    list of messages stored before IDs were store-wide (a
//	                 message's ID was its position); chat_upgrade moves them
//	convs            zset of conversations scored by update time (ms)
//	convactive       set of running or queued conversations
var (
	chatUpdateScript    = newScript("chat_update.lua")
	chatAppendScript    = newScript("chat_append.lua")
	chatListScript      = newScript("chat_list.lua")
	chatDeleteScript    = newScript("chat_delete.lua")
	chatInterruptScript = newScript("chat_interrupt.lua")
	chatRenewScript     = newScript("chat_renew.lua")
	chatCancelScript    = newScript("chat_cancel.lua")
)

func (s *Store) convKey(id string) string     { return s.key("conv", id) }
func (s *Store) convMsgsKey(id string) string { return s.key("convmsgs", id) }

// chatKeys are the keys chat_append.lua and chat_list.lua take.
func (s *Store) chatKeys(id string) []string {
	return []string{s.convKey(id), s.convMsgsKey(id), s.key("chatmsgs", id), s.key("chatseq")}
}

func (s *Store) updateConversation(ctx context.Context, id string, status agentchat.Status, sessionID, title string, at, lease time.Time, created *agentchat.Conversation) error {
	args := []any{id, string(status), sessionID, title, at.UnixMilli(), stamp(at)}
	if created != nil {
		args = append(args, "create", stamp(created.CreatedAt), created.User)
	} else {
		args = append(args, "update", "", "")
	}
	if lease.IsZero() {
		args = append(args, "")
	} else {
		args = append(args, lease.UnixMilli())
	}
	err := chatUpdateScript.Run(ctx, s.client, []string{s.convKey(id), s.key("convs"), s.key("convactive")}, args...).Err()
	return interpretError(ctx, err, nil)
}

// CreateConversation implements agentchat.Store.
func (s *Store) CreateConversation(ctx context.Context, c agentchat.Conversation) error {
	return s.updateConversation(ctx, c.ID, c.Status, c.SessionID, c.Title, c.UpdatedAt, time.Time{}, &c)
}

// UpdateConversation implements agentchat.Store.
func (s *Store) UpdateConversation(ctx context.Context, u agentchat.ConversationUpdate) error {
	id, status, sessionID, title, at := u.ID, u.Status, u.SessionID, u.Title, u.At
	return s.updateConversation(ctx, id, status, sessionID, title, at, u.LeaseUntil, nil)
}

func decodeConversation(m map[string]string) (agentchat.Conversation, error) {
	c := agentchat.Conversation{ID: m["id"], Title: m["title"], SessionID: m["session_id"], User: m["user"], Status: agentchat.Status(m["status"])}
	var err error
	if c.CreatedAt, err = time.Parse(time.RFC3339Nano, m["created_at"]); err != nil {
		return c, fmt.Errorf("redisstore: conversation %s: %w", c.ID, err)
	}
	if c.UpdatedAt, err = time.Parse(time.RFC3339Nano, m["updated_at"]); err != nil {
		return c, fmt.Errorf("redisstore: conversation %s: %w", c.ID, err)
	}
	return c, nil
}

// GetConversation implements agentchat.Store.
func (s *Store) GetConversation(ctx context.Context, id string) (agentchat.Conversation, error) {
	m, err := s.client.HGetAll(ctx, s.convKey(id)).Result()
	if err != nil {
		return agentchat.Conversation{}, interpretError(ctx, err, nil)
	}
	if len(m) == 0 {
		return agentchat.Conversation{}, agentchat.ErrConversationNotFound
	}
	return decodeConversation(m)
}

// ListConversations implements agentchat.Store.
func (s *Store) ListConversations(ctx context.Context, p agentchat.ListConversationsParams) ([]agentchat.Conversation, error) {
	start := int64(0)
	if p.Before != "" {
		rank, err := s.client.ZRevRank(ctx, s.key("convs"), p.Before).Result()
		if err != nil {
			return nil, interpretError(ctx, err, agentchat.ErrConversationNotFound)
		}
		start = rank + 1
	}
	ids, err := s.client.ZRevRange(ctx, s.key("convs"), start, start+int64(p.Limit)-1).Result()
	if err != nil {
		return nil, interpretError(ctx, err, nil)
	}
	cmds, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, id := range ids {
			p.HGetAll(ctx, s.convKey(id))
		}
		return nil
	})
	if err != nil {
		return nil, interpretError(ctx, err, nil)
	}
	out := make([]agentchat.Conversation, 0, len(cmds))
	for _, c := range cmds {
		m := c.(*redis.MapStringStringCmd).Val()
		if len(m) == 0 {
			continue // deleted between the two reads
		}
		conv, err := decodeConversation(m)
		if err != nil {
			return nil, err
		}
		out = append(out, conv)
	}
	return out, nil
}

// DeleteConversation implements agentchat.Store.
func (s *Store) DeleteConversation(ctx context.Context, id string) error {
	err := chatDeleteScript.Run(ctx, s.client, []string{s.convKey(id), s.convMsgsKey(id), s.key("chatmsgs", id), s.key("convs"), s.key("convactive")}, id).Err()
	return interpretError(ctx, err, nil)
}

// AppendChatMessage implements agentchat.Store in one script: the ID is
// the store's counter's next value.
func (s *Store) AppendChatMessage(ctx context.Context, m agentchat.Message) (agentchat.Message, error) {
	raw, err := json.Marshal(m)
	if err != nil {
		return agentchat.Message{}, err
	}
	n, err := chatAppendScript.Run(ctx, s.client, s.chatKeys(m.ConversationID), raw).Int64()
	if err != nil {
		return agentchat.Message{}, interpretError(ctx, err, nil)
	}
	m.ID = n
	return m, nil
}

// ListChatMessages implements agentchat.Store in one script, which also
// answers whether the conversation exists.
func (s *Store) ListChatMessages(ctx context.Context, conversationID string, after int64) ([]agentchat.Message, error) {
	members, err := chatListScript.Run(ctx, s.client, s.chatKeys(conversationID), max(after, 0)).StringSlice()
	if err != nil {
		return nil, interpretError(ctx, err, nil)
	}
	out := make([]agentchat.Message, len(members))
	for i, member := range members {
		id, raw, _ := strings.Cut(member, " ")
		if err := json.Unmarshal([]byte(raw), &out[i]); err != nil {
			return nil, fmt.Errorf("redisstore: chat message: %w", err)
		}
		if out[i].ID, err = strconv.ParseInt(id, 10, 64); err != nil {
			return nil, fmt.Errorf("redisstore: chat message ID %q: %w", id, err)
		}
	}
	return out, nil
}

// InterruptRunning implements agentchat.Store.
func (s *Store) InterruptRunning(ctx context.Context, at time.Time) ([]string, error) {
	ids, err := chatInterruptScript.Run(ctx, s.client, []string{s.key("convactive")}, s.ns, at.UnixMilli(), stamp(at)).StringSlice()
	if err != nil {
		return nil, interpretError(ctx, err, nil)
	}
	return ids, nil
}

// RenewConversations implements agentchat.Store in one script
// (chat_renew.lua), which returns the renewed conversations whose cancel
// was requested.
func (s *Store) RenewConversations(ctx context.Context, ids []string, until time.Time) ([]string, error) {
	if len(ids) == 0 {
		return nil, ctx.Err()
	}
	args := make([]any, 0, len(ids)+2)
	args = append(args, s.ns, until.UnixMilli())
	for _, id := range ids {
		args = append(args, id)
	}
	cancels, err := chatRenewScript.Run(ctx, s.client, []string{s.key("convactive")}, args...).StringSlice()
	if err != nil {
		return nil, interpretError(ctx, err, nil)
	}
	return cancels, nil
}

// RequestCancel implements agentchat.Store in one script (chat_cancel.lua):
// the status is checked and the mark set in one step.
func (s *Store) RequestCancel(ctx context.Context, id string) error {
	return interpretError(ctx, chatCancelScript.Run(ctx, s.client, []string{s.convKey(id)}).Err(), nil)
}
