package pgstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/lib/pq"

	"github.com/agorahq/agora/agentchat"
)

var _ agentchat.Store = (*Store)(nil)

type conversationRow struct {
	ID        string    `db:"id"`
	Title     string    `db:"title"`
	SessionID string    `db:"session_id"`
	User      string    `db:"user_name"`
	Status    string    `db:"status"`
	CreatedAt time.Time `db:"created_at"`
	UpdatedAt time.Time `db:"updated_at"`
}

func (r conversationRow) conversation() agentchat.Conversation {
	return agentchat.Conversation{ID: r.ID, Title: r.Title, SessionID: r.SessionID, User: r.User, Status: agentchat.Status(r.Status),
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
}

const conversationColumns = `id, title, session_id, user_name, status, created_at, updated_at`

// CreateConversation implements agentchat.Store.
func (s *Store) CreateConversation(ctx context.Context, c agentchat.Conversation) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO agora_conversations (`+conversationColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		c.ID, c.Title, c.SessionID, c.User, string(c.Status), c.CreatedAt, c.UpdatedAt)
	return interpretError(ctx, err)
}

// GetConversation implements agentchat.Store.
func (s *Store) GetConversation(ctx context.Context, id string) (agentchat.Conversation, error) {
	var r conversationRow
	err := s.get(ctx, &r, `SELECT `+conversationColumns+` FROM agora_conversations WHERE id = $1`, id)
	if isNoRows(err) {
		return agentchat.Conversation{}, agentchat.ErrConversationNotFound
	}
	if err != nil {
		return agentchat.Conversation{}, interpretError(ctx, err)
	}
	return r.conversation(), nil
}

// ListConversations implements agentchat.Store.
func (s *Store) ListConversations(ctx context.Context, p agentchat.ListConversationsParams) ([]agentchat.Conversation, error) {
	var rows []conversationRow
	var err error
	if p.Before == "" {
		err = s.db.SelectContext(ctx, &rows, `SELECT `+conversationColumns+` FROM agora_conversations
			ORDER BY updated_at DESC, id DESC LIMIT $1`, p.Limit)
	} else {
		err = s.db.SelectContext(ctx, &rows, `SELECT c.id, c.title, c.session_id, c.user_name, c.status, c.created_at, c.updated_at
			FROM agora_conversations c, (SELECT updated_at, id FROM agora_conversations WHERE id = $2) cur
			WHERE (c.updated_at, c.id) < (cur.updated_at, cur.id)
			ORDER BY c.updated_at DESC, c.id DESC LIMIT $1`, p.Limit, p.Before)
		if err == nil && len(rows) == 0 {
			// The last page, or a cursor that names nothing.
			if _, err = s.GetConversation(ctx, p.Before); err != nil {
				return nil, err
			}
		}
	}
	if err != nil {
		return nil, interpretError(ctx, err)
	}
	out := make([]agentchat.Conversation, len(rows))
	for i, r := range rows {
		out[i] = r.conversation()
	}
	return out, nil
}

// DeleteConversation implements agentchat.Store in one statement; its
// messages go with it. The DELETE's condition on the status is re-checked
// on the newest version of a row it waits for, so a run that started
// meanwhile keeps its conversation; the statement's snapshot then tells a
// busy conversation from a missing one.
func (s *Store) DeleteConversation(ctx context.Context, id string) error {
	return s.changeConversation(ctx, id, agentchat.ErrConversationBusy,
		`DELETE FROM agora_conversations WHERE id = $1 AND status NOT IN ('running', 'queued') RETURNING id`)
}

// changeConversation runs change, a DELETE or UPDATE of conversation $1
// under a condition, RETURNING the ID of the row it changed, in one
// statement that also tells, by its snapshot, whether the conversation
// exists: nil when change changed it, refused when it exists and change
// left it, ErrConversationNotFound when it does not exist.
func (s *Store) changeConversation(ctx context.Context, id string, refused error, change string) error {
	var r struct {
		Changed bool `db:"changed"`
		Found   bool `db:"found"`
	}
	err := s.get(ctx, &r, `WITH c AS (`+change+`)
		SELECT EXISTS (SELECT 1 FROM c) AS changed, EXISTS (SELECT 1 FROM agora_conversations WHERE id = $1) AS found`, id)
	switch {
	case err != nil:
		return interpretError(ctx, err)
	case r.Changed:
		return nil
	case r.Found:
		return refused
	}
	return agentchat.ErrConversationNotFound
}

// UpdateConversation implements agentchat.Store. A status other than
// running or queued clears the cancel request in the same statement.
func (s *Store) UpdateConversation(ctx context.Context, u agentchat.ConversationUpdate) error {
	id, status, sessionID, title, at := u.ID, u.Status, u.SessionID, u.Title, u.At
	lease := sql.NullTime{Time: u.LeaseUntil, Valid: !u.LeaseUntil.IsZero()}
	return s.execOne(ctx, agentchat.ErrConversationNotFound, `UPDATE agora_conversations SET status = $2,
		session_id = CASE WHEN $3 = '' THEN session_id ELSE $3 END,
		title = CASE WHEN $4 = '' THEN title ELSE $4 END, updated_at = $5,
		lease_until = COALESCE($6, lease_until),
		cancel_requested = cancel_requested AND $2 IN ('running', 'queued') WHERE id = $1`,
		id, string(status), sessionID, title, at, lease)
}

// RenewConversations implements agentchat.Store in one statement, which
// returns the renewed conversations whose cancel was requested.
func (s *Store) RenewConversations(ctx context.Context, ids []string, until time.Time) ([]string, error) {
	cancels := []string{}
	err := s.db.SelectContext(ctx, &cancels, `WITH r AS (
			UPDATE agora_conversations SET lease_until = $2
			WHERE id = ANY($1) AND status IN ('running', 'queued') RETURNING id, cancel_requested)
		SELECT id FROM r WHERE cancel_requested`, pq.Array(ids), until)
	if err != nil {
		return nil, interpretError(ctx, err)
	}
	return cancels, nil
}

// RequestCancel implements agentchat.Store in one statement, as
// DeleteConversation: the UPDATE's condition on the status is re-checked
// on the newest version of a row it waits for, so a run that ends
// meanwhile is not marked; the statement's snapshot then tells a
// conversation not running from a missing one.
func (s *Store) RequestCancel(ctx context.Context, id string) error {
	return s.changeConversation(ctx, id, agentchat.ErrNotRunning, `UPDATE agora_conversations SET cancel_requested = true
		WHERE id = $1 AND status IN ('running', 'queued') RETURNING id`)
}

// AppendChatMessage implements agentchat.Store in one statement: the ID
// comes from the store's sequence, drawn once the conversation's row is
// locked, so the appends of one conversation commit in the order of their
// IDs.
func (s *Store) AppendChatMessage(ctx context.Context, m agentchat.Message) (agentchat.Message, error) {
	stmt, err := s.prepared(ctx, `
		WITH c AS (SELECT id FROM agora_conversations WHERE id = $1 FOR UPDATE)
		INSERT INTO agora_chat_messages (conversation_id, id, type, content, created_at)
		SELECT c.id, nextval('agora_chat_message_ids'), $2, $3, $4 FROM c RETURNING id`)
	if err != nil {
		return agentchat.Message{}, err
	}
	err = stmt.GetContext(ctx, &m.ID, m.ConversationID, string(m.Type), m.Content, m.CreatedAt)
	if isNoRows(err) {
		return agentchat.Message{}, agentchat.ErrConversationNotFound
	}
	return m, interpretError(ctx, err)
}

// ListChatMessages implements agentchat.Store.
func (s *Store) ListChatMessages(ctx context.Context, conversationID string, after int64) ([]agentchat.Message, error) {
	if _, err := s.GetConversation(ctx, conversationID); err != nil {
		return nil, err
	}
	var rows []struct {
		ID        int64     `db:"id"`
		Type      string    `db:"type"`
		Content   string    `db:"content"`
		CreatedAt time.Time `db:"created_at"`
	}
	err := s.db.SelectContext(ctx, &rows, `SELECT id, type, content, created_at FROM agora_chat_messages
		WHERE conversation_id = $1 AND id > $2 ORDER BY id`, conversationID, after)
	if err != nil {
		return nil, interpretError(ctx, err)
	}
	out := make([]agentchat.Message, len(rows))
	for i, r := range rows {
		out[i] = agentchat.Message{ID: r.ID, ConversationID: conversationID, Type: agentchat.EventType(r.Type), Content: r.Content, CreatedAt: r.CreatedAt.UTC()}
	}
	return out, nil
}

// InterruptRunning implements agentchat.Store; it clears the cancel
// requests of the conversations it marks.
func (s *Store) InterruptRunning(ctx context.Context, at time.Time) ([]string, error) {
	ids := []string{}
	err := s.db.SelectContext(ctx, &ids, `UPDATE agora_conversations SET status = 'interrupted', updated_at = $1,
		cancel_requested = false WHERE status IN ('running', 'queued') AND (lease_until IS NULL OR lease_until <= $1) RETURNING id`, at)
	if err != nil {
		return nil, interpretError(ctx, err)
	}
	return ids, nil
}
