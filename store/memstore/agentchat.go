package memstore

import (
	"context"
	"slices"
	"sort"
	"time"

	"github.com/agorahq/agora/agentchat"
)

var _ agentchat.Store = (*Store)(nil)

type chatRec struct {
	conv     agentchat.Conversation
	messages []agentchat.Message
	lease    time.Time // ConversationUpdate.LeaseUntil's, for a busy status
	cancel   bool      // RequestCancel's mark, cleared when the status leaves busy
}

// CreateConversation implements agentchat.Store.
func (s *Store) CreateConversation(ctx context.Context, c agentchat.Conversation) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.chats == nil {
		s.chats = map[string]*chatRec{}
	}
	s.chats[c.ID] = &chatRec{conv: c}
	return nil
}

// GetConversation implements agentchat.Store.
func (s *Store) GetConversation(ctx context.Context, id string) (agentchat.Conversation, error) {
	if err := ctx.Err(); err != nil {
		return agentchat.Conversation{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.chats[id]
	if !ok {
		return agentchat.Conversation{}, agentchat.ErrConversationNotFound
	}
	return r.conv, nil
}

// ListConversations implements agentchat.Store.
func (s *Store) ListConversations(ctx context.Context, p agentchat.ListConversationsParams) ([]agentchat.Conversation, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []agentchat.Conversation{}
	for _, r := range s.chats {
		out = append(out, r.conv)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].UpdatedAt.Equal(out[j].UpdatedAt) {
			return out[i].UpdatedAt.After(out[j].UpdatedAt)
		}
		return out[i].ID > out[j].ID
	})
	if p.Before != "" {
		i := slices.IndexFunc(out, func(c agentchat.Conversation) bool { return c.ID == p.Before })
		if i < 0 {
			return nil, agentchat.ErrConversationNotFound
		}
		out = out[i+1:]
	}
	return out[:min(len(out), p.Limit)], nil
}

// withChat runs fn on conversation id's record under the mutex, or
// returns ErrConversationNotFound.
func (s *Store) withChat(ctx context.Context, id string, fn func(r *chatRec) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.chats[id]
	if !ok {
		return agentchat.ErrConversationNotFound
	}
	return fn(r)
}

// DeleteConversation implements agentchat.Store: the status is checked
// and the conversation deleted under the mutex.
func (s *Store) DeleteConversation(ctx context.Context, id string) error {
	return s.withChat(ctx, id, func(r *chatRec) error {
		if r.conv.Status.Busy() {
			return agentchat.ErrConversationBusy
		}
		delete(s.chats, id)
		return nil
	})
}

// UpdateConversation implements agentchat.Store.
func (s *Store) UpdateConversation(ctx context.Context, u agentchat.ConversationUpdate) error {
	return s.withChat(ctx, u.ID, func(r *chatRec) error {
		r.conv.Status, r.conv.UpdatedAt = u.Status, u.At
		r.cancel = r.cancel && u.Status.Busy()
		if !u.LeaseUntil.IsZero() {
			r.lease = u.LeaseUntil
		}
		if u.SessionID != "" {
			r.conv.SessionID = u.SessionID
		}
		if u.Title != "" {
			r.conv.Title = u.Title
		}
		return nil
	})
}

// AppendChatMessage implements agentchat.Store: the ID is the store's next,
// so IDs rise across every conversation.
func (s *Store) AppendChatMessage(ctx context.Context, m agentchat.Message) (agentchat.Message, error) {
	if err := ctx.Err(); err != nil {
		return agentchat.Message{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.chats[m.ConversationID]
	if !ok {
		return agentchat.Message{}, agentchat.ErrConversationNotFound
	}
	s.chatSeq++
	m.ID = s.chatSeq
	r.messages = append(r.messages, m)
	return m, nil
}

// ListChatMessages implements agentchat.Store.
func (s *Store) ListChatMessages(ctx context.Context, conversationID string, after int64) ([]agentchat.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.chats[conversationID]
	if !ok {
		return nil, agentchat.ErrConversationNotFound
	}
	i := sort.Search(len(r.messages), func(i int) bool { return r.messages[i].ID > after })
	return append([]agentchat.Message{}, r.messages[i:]...), nil
}

// RenewConversations implements agentchat.Store.
func (s *Store) RenewConversations(ctx context.Context, ids []string, until time.Time) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var cancels []string
	for _, id := range ids {
		if r, ok := s.chats[id]; ok && r.conv.Status.Busy() {
			r.lease = until
			if r.cancel {
				cancels = append(cancels, id)
			}
		}
	}
	return cancels, nil
}

// RequestCancel implements agentchat.Store: the status is checked and the
// mark set under the mutex.
func (s *Store) RequestCancel(ctx context.Context, id string) error {
	return s.withChat(ctx, id, func(r *chatRec) error {
		if !r.conv.Status.Busy() {
			return agentchat.ErrNotRunning
		}
		r.cancel = true
		return nil
	})
}

// InterruptRunning implements agentchat.Store.
func (s *Store) InterruptRunning(ctx context.Context, at time.Time) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := []string{}
	for id, r := range s.chats {
		if r.conv.Status.Busy() && !r.lease.After(at) {
			r.conv.Status, r.conv.UpdatedAt, r.cancel = agentchat.StatusInterrupted, at, false
			ids = append(ids, id)
		}
	}
	return ids, nil
}
