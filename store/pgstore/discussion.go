package pgstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/agorahq/agora/discussion"
)

const promptColumns = `id, task_id, requester_agent, prompt_message, required_responses, timeout_minutes,
	status, collected_context, squad_chat_id, resolved_at, created_at, requester_key`

type promptRow struct {
	ID                string       `db:"id"`
	TaskID            *string      `db:"task_id"`
	RequesterAgent    string       `db:"requester_agent"`
	PromptMessage     string       `db:"prompt_message"`
	RequiredResponses int          `db:"required_responses"`
	TimeoutMinutes    int          `db:"timeout_minutes"`
	Status            string       `db:"status"`
	CollectedContext  []byte       `db:"collected_context"`
	SquadChatID       string       `db:"squad_chat_id"`
	ResolvedAt        sql.NullTime `db:"resolved_at"`
	CreatedAt         time.Time    `db:"created_at"`
	RequesterKey      string       `db:"requester_key"`
}

// prompt converts a row, with times in UTC as the service wrote them.
func (r promptRow) prompt() (discussion.Prompt, error) {
	p := discussion.Prompt{
		ID: r.ID, TaskID: r.TaskID, RequesterAgent: r.RequesterAgent, PromptMessage: r.PromptMessage,
		RequiredResponses: r.RequiredResponses, TimeoutMinutes: r.TimeoutMinutes, Status: discussion.Status(r.Status),
		SquadChatID: r.SquadChatID, CreatedAt: r.CreatedAt.UTC(), CollectedContext: []discussion.ContextEntry{},
		RequesterKey: r.RequesterKey,
	}
	if r.ResolvedAt.Valid {
		t := r.ResolvedAt.Time.UTC()
		p.ResolvedAt = &t
	}
	if err := json.Unmarshal(r.CollectedContext, &p.CollectedContext); err != nil {
		return discussion.Prompt{}, fmt.Errorf("pgstore: prompt %s context: %w", r.ID, err)
	}
	for i := range p.CollectedContext {
		p.CollectedContext[i].CreatedAt = p.CollectedContext[i].CreatedAt.UTC()
	}
	return p, nil
}

func insertMessage(ctx context.Context, tx *sqlx.Tx, m discussion.Message) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO agora_squad_chat (`+messageColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, messageArgs(m)...)
	return err
}

// CreatePrompt implements discussion.Store.
func (s *Store) CreatePrompt(ctx context.Context, p discussion.Prompt, m discussion.Message) error {
	entries, err := json.Marshal(p.CollectedContext)
	if err != nil {
		return err
	}
	if p.CollectedContext == nil {
		entries = []byte("[]")
	}
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return interpretError(ctx, err)
	}
	defer tx.Rollback()
	_, err = tx.ExecContext(ctx, `INSERT INTO agora_prompts (`+promptColumns+`, deadline)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
		p.ID, p.TaskID, p.RequesterAgent, p.PromptMessage, p.RequiredResponses, p.TimeoutMinutes,
		string(p.Status), entries, p.SquadChatID, p.ResolvedAt, p.CreatedAt, p.RequesterKey, p.Deadline())
	if isUniqueViolation(err, "agora_prompts_pkey") {
		return discussion.ErrPromptExists
	}
	if err != nil {
		return interpretError(ctx, err)
	}
	if err := insertMessage(ctx, tx, m); err != nil {
		return interpretError(ctx, err)
	}
	return interpretError(ctx, tx.Commit())
}

// GetPrompt implements discussion.Store.
func (s *Store) GetPrompt(ctx context.Context, id string) (discussion.Prompt, error) {
	var r promptRow
	err := s.get(ctx, &r, `SELECT `+promptColumns+` FROM agora_prompts WHERE id = $1`, id)
	if isNoRows(err) {
		return discussion.Prompt{}, discussion.ErrPromptNotFound
	}
	if err != nil {
		return discussion.Prompt{}, interpretError(ctx, err)
	}
	return r.prompt()
}

func prompts(rows []promptRow) ([]discussion.Prompt, error) {
	out := make([]discussion.Prompt, 0, len(rows))
	for _, r := range rows {
		p, err := r.prompt()
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// ListPrompts implements discussion.Store. The agent filter is
// discussion.Prompt.AnswerableBy in SQL, so that LIMIT counts only the
// prompts kept.
func (s *Store) ListPrompts(ctx context.Context, p discussion.ListParams) ([]discussion.Prompt, error) {
	statuses := make([]string, len(p.Statuses))
	for i, st := range p.Statuses {
		statuses[i] = string(st)
	}
	var rows []promptRow
	// The status as of $5 is discussion.Prompt.AsOf's: TimeOut's lapse, as
	// in TimeOut below (storetest's ListFilters holds the two together).
	err := s.db.SelectContext(ctx, &rows, `SELECT `+promptColumns+` FROM agora_prompts
		WHERE (cardinality($1::text[]) = 0 OR CASE WHEN status IN ('pending', 'collecting') AND deadline < $5
				THEN 'timed_out' ELSE status END = ANY($1))
			AND ($2 = '' OR task_id = $2)
			AND ($3 = '' OR (requester_agent <> $3 AND NOT collected_context @> jsonb_build_array(jsonb_build_object('agent', $3::text))))
		ORDER BY id DESC LIMIT $4`, pq.Array(statuses), p.TaskID, p.Agent, max(p.Limit, 0), p.Now)
	if err != nil {
		return nil, interpretError(ctx, err)
	}
	return prompts(rows)
}

// changePrompt locks the prompt's row, lets change (a rule of the
// discussion package) decide on the prompt as stored, and writes back what
// it changed, and then what also writes, in one transaction: concurrent
// changes of one prompt are decided one at a time. Nothing is written when
// change or also fails.
func (s *Store) changePrompt(ctx context.Context, id string, change func(p *discussion.Prompt) error, also func(tx *sqlx.Tx) error) (discussion.Prompt, error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return discussion.Prompt{}, interpretError(ctx, err)
	}
	defer tx.Rollback()
	var r promptRow
	err = tx.GetContext(ctx, &r, `SELECT `+promptColumns+` FROM agora_prompts WHERE id = $1 FOR UPDATE`, id)
	if isNoRows(err) {
		return discussion.Prompt{}, discussion.ErrPromptNotFound
	}
	if err != nil {
		return discussion.Prompt{}, interpretError(ctx, err)
	}
	p, err := r.prompt()
	if err != nil {
		return discussion.Prompt{}, err
	}
	if err := change(&p); err != nil {
		return discussion.Prompt{}, err
	}
	entries, err := json.Marshal(p.CollectedContext)
	if err != nil {
		return discussion.Prompt{}, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE agora_prompts SET collected_context = $2, status = $3, resolved_at = $4 WHERE id = $1`,
		p.ID, entries, string(p.Status), p.ResolvedAt); err != nil {
		return discussion.Prompt{}, interpretError(ctx, err)
	}
	if also != nil {
		if err := also(tx); err != nil {
			return discussion.Prompt{}, interpretError(ctx, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return discussion.Prompt{}, interpretError(ctx, err)
	}
	return p, nil
}

// Respond implements discussion.Store: discussion.Prompt.Respond decides
// on the locked row, and the response's message is stored in the same
// transaction.
func (s *Store) Respond(ctx context.Context, p discussion.RespondParams) (discussion.Prompt, error) {
	return s.changePrompt(ctx, p.PromptID,
		func(cur *discussion.Prompt) error { return cur.Respond(p.Entry) },
		func(tx *sqlx.Tx) error { return insertMessage(ctx, tx, p.Message) })
}

// ClosePrompt implements discussion.Store: discussion.Prompt.Close decides
// on the locked row.
func (s *Store) ClosePrompt(ctx context.Context, id string, to discussion.Status, now time.Time) (discussion.Prompt, error) {
	return s.changePrompt(ctx, id, func(p *discussion.Prompt) error { return p.Close(to, now) }, nil)
}

// TimeOut implements discussion.Store; the UPDATE re-checks each row it
// waits for, so concurrent sweeps time a prompt out once. Its WHERE and SET
// are discussion.Prompt.TimeOut in SQL (open: pending or collecting;
// lapsed: deadline before now; resolved at the deadline), so that
// the deadline index finds the overdue prompts; storetest's PromptRules
// pins the two together.
func (s *Store) TimeOut(ctx context.Context, now time.Time) ([]string, error) {
	var ids []string
	err := s.db.SelectContext(ctx, &ids, `
		UPDATE agora_prompts SET status = 'timed_out', resolved_at = deadline
		WHERE status IN ('pending', 'collecting') AND deadline < $1
		RETURNING id`, now)
	return ids, interpretError(ctx, err)
}

const messageColumns = `id, agent_name, message, is_human, message_type, discussion_prompt_id, task_ref, reply_to_id, created_at`

// messageArgs are m's values in the order of messageColumns.
func messageArgs(m discussion.Message) []any {
	return []any{m.ID, m.AgentName, m.Message, m.IsHuman, string(m.MessageType), m.DiscussionPromptID, m.TaskRef, m.ReplyToID, m.CreatedAt}
}

type messageRow struct {
	ID                 string    `db:"id"`
	AgentName          string    `db:"agent_name"`
	Message            string    `db:"message"`
	IsHuman            bool      `db:"is_human"`
	MessageType        string    `db:"message_type"`
	DiscussionPromptID *string   `db:"discussion_prompt_id"`
	TaskRef            *string   `db:"task_ref"`
	ReplyToID          *string   `db:"reply_to_id"`
	CreatedAt          time.Time `db:"created_at"`
}

func messages(rows []messageRow) []discussion.Message {
	out := make([]discussion.Message, len(rows))
	for i, r := range rows {
		out[i] = discussion.Message{
			ID: r.ID, AgentName: r.AgentName, Message: r.Message, IsHuman: r.IsHuman,
			MessageType: discussion.MessageType(r.MessageType), DiscussionPromptID: r.DiscussionPromptID,
			TaskRef: r.TaskRef, ReplyToID: r.ReplyToID, CreatedAt: r.CreatedAt.UTC(),
		}
	}
	return out
}

// ListResponses implements discussion.Store.
func (s *Store) ListResponses(ctx context.Context, promptID string) ([]discussion.Message, error) {
	if _, err := s.GetPrompt(ctx, promptID); err != nil {
		return nil, err
	}
	var rows []messageRow
	err := s.db.SelectContext(ctx, &rows, `SELECT `+messageColumns+` FROM agora_squad_chat
		WHERE discussion_prompt_id = $1 AND message_type = 'discussion_response' ORDER BY id`, promptID)
	if err != nil {
		return nil, interpretError(ctx, err)
	}
	return messages(rows), nil
}

// PostMessage implements discussion.Store: one statement that inserts the
// message only when the message it replies to is stored (messages are
// never deleted, and the foreign key backs the check).
func (s *Store) PostMessage(ctx context.Context, m discussion.Message) error {
	return s.execOne(ctx, discussion.ErrReplyToNotFound, `INSERT INTO agora_squad_chat (`+messageColumns+`)
		SELECT $1, $2, $3, $4, $5, $6, $7, $8::text, $9
		WHERE $8::text IS NULL OR EXISTS (SELECT 1 FROM agora_squad_chat WHERE id = $8::text)`, messageArgs(m)...)
}

// ListMessages implements discussion.Store.
func (s *Store) ListMessages(ctx context.Context, limit int, before string) ([]discussion.Message, error) {
	var rows []messageRow
	err := s.db.SelectContext(ctx, &rows, `SELECT `+messageColumns+` FROM agora_squad_chat
		WHERE ($1 = '' OR id < $1) ORDER BY id DESC LIMIT $2`, before, max(limit, 0))
	if err != nil {
		return nil, interpretError(ctx, err)
	}
	return messages(rows), nil
}
