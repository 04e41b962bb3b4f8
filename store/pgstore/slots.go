package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/lib/pq"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/internal/jsontext"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// CreateClaim implements slots.ClaimStore.
func (s *Store) CreateClaim(ctx context.Context, c slots.Claim) error {
	sources, err := encodeSources(c.Sources)
	if err != nil {
		return err
	}
	_, err = s.db.ExecContext(ctx, `WITH claim AS (
			INSERT INTO agora_claims (id, title, body, domain, created_at, sources, protocol, author_id, author_name, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING protocol, created_at)`+countProtocolUse+`
		SELECT 1`,
		c.ID, c.Title, c.Body, c.Domain, store.Millis(c.CreatedAt), sources, c.Protocol, c.AuthorID, c.AuthorName, store.Millis(c.UpdatedAt))
	if isUniqueViolation(err, "agora_claims_pkey") {
		return slots.ErrClaimExists
	}
	return interpretError(ctx, err)
}

// claimColumns are a claim's columns as claimRow reads them; its comments
// are counted from the comments column (migration 039), which AddComment
// writes in the transaction that inserts each.
// countProtocolUse is the CTE that counts the claim inserted by the CTE
// claim (returning its protocol and created_at) in agora_protocol_uses
// (migration 046), in the statement that inserts it.
const countProtocolUse = `,
		protocol_use AS (
			INSERT INTO agora_protocol_uses AS u (name, claims, last_used_at)
			SELECT protocol, 1, created_at FROM claim WHERE protocol <> ''
			ON CONFLICT (name) DO UPDATE SET claims = u.claims + 1, last_used_at = GREATEST(u.last_used_at, EXCLUDED.last_used_at))`

// ProtocolUses implements slots.ClaimStore.
func (s *Store) ProtocolUses(ctx context.Context, p slots.ProtocolUsesParams) ([]slots.ProtocolUse, error) {
	var rows []struct {
		Name       string `db:"name"`
		Claims     int    `db:"claims"`
		LastUsedAt int64  `db:"last_used_at"`
	}
	limit := max(p.Limit, 0)
	if p.Name != "" {
		limit = 1
	}
	err := s.db.SelectContext(ctx, &rows, `SELECT name, claims, last_used_at FROM agora_protocol_uses
		WHERE ($1 = '' OR name = $1) ORDER BY claims DESC, last_used_at DESC, name LIMIT $2`, p.Name, limit)
	if err != nil {
		return nil, interpretError(ctx, err)
	}
	out := make([]slots.ProtocolUse, len(rows))
	for i, r := range rows {
		out[i] = slots.ProtocolUse{Name: r.Name, Claims: r.Claims, LastUsedAt: store.FromMillis(r.LastUsedAt)}
	}
	return out, nil
}

const claimColumns = `id, title, body, domain, created_at, sources, protocol, author_id, author_name,
	comment_count, GREATEST(updated_at, created_at) AS updated_at`

type claimRow struct {
	ID           string `db:"id"`
	Title        string `db:"title"`
	Body         string `db:"body"`
	Domain       string `db:"domain"`
	CreatedAt    int64  `db:"created_at"`
	Sources      []byte `db:"sources"`
	Protocol     string `db:"protocol"`
	AuthorID     string `db:"author_id"`
	AuthorName   string `db:"author_name"`
	CommentCount int    `db:"comment_count"`
	UpdatedAt    int64  `db:"updated_at"`
}

func (r claimRow) claim() (slots.Claim, error) {
	sources, err := decodeSources(r.Sources)
	return slots.Claim{ID: r.ID, Title: r.Title, Body: r.Body, Domain: r.Domain, CreatedAt: store.FromMillis(r.CreatedAt), Sources: sources,
		Protocol: r.Protocol, AuthorID: r.AuthorID, AuthorName: r.AuthorName, CommentCount: r.CommentCount, UpdatedAt: store.FromMillis(r.UpdatedAt)}, err
}

// encodeSources is the sources column's value of a claim's sources.
func encodeSources(sources []slots.Source) ([]byte, error) {
	if sources == nil {
		sources = []slots.Source{}
	}
	return json.Marshal(sources)
}

// decodeSources reads the sources column. Most claims have none, which
// needs no decoding: a job's claim is read on every take.
func decodeSources(b []byte) ([]slots.Source, error) {
	out := []slots.Source{}
	if string(b) == "[]" {
		return out, nil
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("pgstore: claim sources: %w", err)
	}
	return out, nil
}

// GetClaim implements slots.ClaimStore.
func (s *Store) GetClaim(ctx context.Context, id string) (slots.Claim, error) {
	var r claimRow
	err := s.get(ctx, &r, `SELECT `+claimColumns+` FROM agora_claims WHERE id = $1`, id)
	if isNoRows(err) {
		return slots.Claim{}, slots.ErrClaimNotFound
	}
	if err != nil {
		return slots.Claim{}, interpretError(ctx, err)
	}
	return r.claim()
}

// ListClaims implements slots.ClaimStore.
func (s *Store) ListClaims(ctx context.Context, p slots.ListClaimsParams) ([]slots.Claim, error) {
	var rows []claimRow
	// An empty bound, domain or protocol does not filter;
	// agora_claims_domain and agora_claims_protocol serve those filters.
	// ClaimTop orders the newest claims by their comment count (migration
	// 049), then newest first.
	err := s.db.SelectContext(ctx, &rows, `SELECT `+claimColumns+` FROM (SELECT * FROM agora_claims
		WHERE ($1 = '' OR id < $1) AND ($2 = '' OR domain = $2) AND ($5 = '' OR protocol = $5) ORDER BY id DESC LIMIT $3) c
		ORDER BY CASE WHEN $4 = 'top' THEN c.comment_count ELSE 0 END DESC, c.id DESC`, p.Before, p.Domain, max(p.Limit, 0), string(p.Order), p.Protocol)
	if err != nil {
		return nil, interpretError(ctx, err)
	}
	out := make([]slots.Claim, len(rows))
	for i, r := range rows {
		if out[i], err = r.claim(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// AddComment implements slots.ClaimStore. The claim's comments column and
// count are written again, and a claim's first draft makes its open
// slots ready for the job queue, in the same transaction.
func (s *Store) AddComment(ctx context.Context, c slots.Comment) error {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return interpretError(ctx, err)
	}
	defer tx.Rollback()
	// The claim's row lock orders this against ReplaceOpenSlots, which
	// reads has_draft to mark the slots it inserts.
	var hasDraft bool
	err = tx.GetContext(ctx, &hasDraft, `SELECT has_draft FROM agora_claims WHERE id = $1 FOR UPDATE`, c.ClaimID)
	if isNoRows(err) {
		return slots.ErrClaimNotFound
	}
	if err != nil {
		return interpretError(ctx, err)
	}
	if c.ParentID != "" {
		// Comments are never deleted, and the claim's row lock orders this
		// against the claim's other comments.
		var found bool
		if err := tx.GetContext(ctx, &found, `SELECT EXISTS (SELECT 1 FROM agora_comments WHERE id = $1 AND claim_id = $2)`, c.ParentID, c.ClaimID); err != nil {
			return interpretError(ctx, err)
		}
		if !found {
			return slots.ErrParentNotFound
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO agora_comments (id, claim_id, body, comment_type, author_id, agent_name, created_at, parent_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, c.ID, c.ClaimID, c.Body, string(c.CommentType), c.AuthorID, c.AgentName, store.Millis(c.CreatedAt), c.ParentID); err != nil {
		return interpretError(ctx, err)
	}
	draft := c.CommentType == slots.CommentDraft
	// The claim's comments column holds its oldest comments, at most
	// slots.JobComments ($4), as a JSON array with an array of
	// commentFields per comment (decodeComments reads it), so that a job's
	// claim and comments come back in one row; it is written again only
	// while it holds fewer, so that past them a comment costs the row the
	// same however many came before. Arrays of text cost PostgreSQL a third
	// of what a JSON object per comment did (to_json of the rows, or
	// json_build_object), which looks up each field's type for every one.
	if _, err := tx.ExecContext(ctx, `UPDATE agora_claims c SET comments = CASE WHEN c.comment_count < $4
		THEN to_json(ARRAY(SELECT `+commentFields+` FROM agora_comments m WHERE m.claim_id = c.id ORDER BY m.id LIMIT $4))
		ELSE c.comments END,
		comment_count = c.comment_count + 1, has_draft = has_draft OR $2,
		updated_at = GREATEST(updated_at, $3) WHERE c.id = $1`, c.ClaimID, draft, store.Millis(c.CreatedAt), slots.JobComments); err != nil {
		return interpretError(ctx, err)
	}
	if draft && !hasDraft {
		if _, err := tx.ExecContext(ctx, `UPDATE agora_role_slots SET ready = true WHERE claim_id = $1`, c.ClaimID); err != nil {
			return interpretError(ctx, err)
		}
	}
	return interpretError(ctx, tx.Commit())
}

// domainWrite is the part of a statement that writes a new domain, the
// statement's parameter param, to the claims of the relation from (its
// column claim_id): each claim's row, which the claims listed by domain
// read, then its role slots' copy, which the job queue's partial indexes
// read (migration 001). An empty domain writes nothing. It is two CTEs,
// claim and roles; roles reads claim, so the claim's row is locked before
// its slots', the order every other write that takes both keeps. A Prism
// domain layer (updatePipelineQuery) and a calibration (calibrateQuery)
// write a domain with it.
func domainWrite(from, param, at string) string {
	return `claim AS (
		UPDATE agora_claims SET domain = ` + param + `, updated_at = GREATEST(updated_at, ` + at + `) FROM ` + from + `
		WHERE ` + param + ` <> '' AND agora_claims.id = ` + from + `.claim_id RETURNING agora_claims.id),
	roles AS (
		UPDATE agora_role_slots SET domain = ` + param + ` FROM claim WHERE agora_role_slots.claim_id = claim.id)`
}

// commentFields is the comment m as an array of text, in the order
// decodeComments reads.
const commentFields = `ARRAY[m.id, m.claim_id, m.body, m.comment_type, m.author_id, m.agent_name, m.created_at::text, m.parent_id]`

// decodeComments reads a claim's comments column (see AddComment): by readComments where
// it can (the column as PostgreSQL's to_json writes it), else by
// encoding/json, whose validation pass and reflection cost about four times
// as much (BenchmarkDecodeComments). FuzzDecodeComments holds the two to
// one answer.
func decodeComments(raw []byte) ([]slots.Comment, error) {
	if out, ok := readComments(raw); ok {
		return out, nil
	}
	return unmarshalComments(raw)
}

// unmarshalComments is decodeComments by encoding/json.
func unmarshalComments(raw []byte) ([]slots.Comment, error) {
	var rows [][]string
	if err := json.Unmarshal(raw, &rows); err != nil {
		return nil, fmt.Errorf("pgstore: comments: %w", err)
	}
	out := make([]slots.Comment, len(rows))
	for i, r := range rows {
		if len(r) != 7 && len(r) != 8 {
			return nil, fmt.Errorf("pgstore: comments: a comment of %d fields", len(r))
		}
		var f [8]string
		copy(f[:], r)
		c, err := commentOf(&f)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

// commentOf is the comment of commentFields' eight texts; the comments
// column of a claim not commented on since migration 048 has seven, the
// eighth (its parent) then empty.
func commentOf(f *[8]string) (slots.Comment, error) {
	at, err := strconv.ParseInt(f[6], 10, 64)
	if err != nil {
		return slots.Comment{}, fmt.Errorf("pgstore: comments: %w", err)
	}
	return slots.Comment{ID: f[0], ClaimID: f[1], Body: f[2], CommentType: slots.CommentType(f[3]),
		AuthorID: f[4], AgentName: f[5], ParentID: f[7], CreatedAt: store.FromMillis(at)}, nil
}

// readComments reads raw if it is compact JSON of arrays of eight (or,
// written before migration 048, seven) strings that jsontext.String reads; ok is false for anything else, and then
// decodeComments's encoding/json answers. The texts share one copy of raw.
func readComments(raw []byte) (out []slots.Comment, ok bool) {
	text := string(raw)
	i, at := 0, func(i int) byte {
		if i < len(text) {
			return text[i]
		}
		return 0
	}
	if at(i) != '[' {
		return nil, false
	}
	i++
	out = []slots.Comment{}
	if at(i) == ']' {
		return out, i+1 == len(text)
	}
	for {
		if at(i) != '[' {
			return nil, false
		}
		i++
		var f [8]string
		for k := range f {
			if k == 7 && at(i) == ']' {
				break
			}
			if k > 0 {
				if at(i) != ',' {
					return nil, false
				}
				i++
			}
			s, n, ok := jsontext.String(text[i:])
			if !ok {
				return nil, false
			}
			f[k], i = s, i+n
		}
		if at(i) != ']' {
			return nil, false
		}
		i++
		c, err := commentOf(&f)
		if err != nil {
			return nil, false
		}
		out = append(out, c)
		switch at(i) {
		case ']':
			return out, i+1 == len(text)
		case ',':
			i++
		default:
			return nil, false
		}
	}
}

// ListComments implements slots.ClaimStore: every comment, read from
// agora_comments (the claim's comments column keeps its oldest only); a
// claim without any is then looked up.
func (s *Store) ListComments(ctx context.Context, claimID string, p slots.ListCommentsParams) ([]slots.Comment, error) {
	query := listOldestCommentsQuery
	if p.Newest {
		query = listNewestCommentsQuery
	}
	var rows []commentRow
	if err := s.db.SelectContext(ctx, &rows, query, claimID, max(p.Limit, 0)); err != nil {
		return nil, interpretError(ctx, err)
	}
	if len(rows) == 0 {
		var found bool
		if err := s.get(ctx, &found, `SELECT EXISTS (SELECT 1 FROM agora_claims WHERE id = $1)`, claimID); err != nil {
			return nil, interpretError(ctx, err)
		}
		if !found {
			return nil, slots.ErrClaimNotFound
		}
	}
	out := make([]slots.Comment, len(rows))
	for i, r := range rows {
		out[i] = slots.Comment{ID: r.ID, ClaimID: r.ClaimID, Body: r.Body, CommentType: slots.CommentType(r.CommentType),
			AuthorID: r.AuthorID, AgentName: r.AgentName, ParentID: r.ParentID, CreatedAt: store.FromMillis(r.CreatedAt)}
	}
	return out, nil
}

// The windows of ListComments, each read from agora_comments_claim's index
// in its order, oldest first.
const (
	listOldestCommentsQuery = `SELECT ` + commentRowColumns + ` FROM agora_comments
		WHERE claim_id = $1 ORDER BY id LIMIT $2`
	listNewestCommentsQuery = `SELECT * FROM (SELECT ` + commentRowColumns + ` FROM agora_comments
		WHERE claim_id = $1 ORDER BY id DESC LIMIT $2) m ORDER BY id`
	commentRowColumns = `id, claim_id, body, comment_type, author_id, agent_name, created_at, parent_id`
)

// commentRow is a row of agora_comments.
type commentRow struct {
	ID          string `db:"id"`
	ClaimID     string `db:"claim_id"`
	Body        string `db:"body"`
	CommentType string `db:"comment_type"`
	AuthorID    string `db:"author_id"`
	AgentName   string `db:"agent_name"`
	CreatedAt   int64  `db:"created_at"`
	ParentID    string `db:"parent_id"`
}

// pickClaimQuery is PickClaim in one statement: pool is the candidates,
// newest first, numbered from 0 and, for top only, counted (from
// agora_comments_claim's index); pick is the one chosen; the answer is its
// row and its newest $5 comments, oldest first, as AddComment writes them.
const pickClaimQuery = `
	WITH pool AS (
		SELECT c.id, row_number() OVER (ORDER BY c.id DESC) - 1 AS i,
			CASE WHEN $3 = 'top' THEN (SELECT count(*) FROM agora_comments m WHERE m.claim_id = c.id) ELSE 0 END AS n
		FROM (SELECT id FROM agora_claims WHERE ($1 = '' OR domain = $1) ORDER BY id DESC LIMIT $2::int) c),
	pick AS (
		SELECT id FROM pool
		WHERE $3 <> 'random' OR i = GREATEST(LEAST(floor($4::float8 * (SELECT count(*) FROM pool)), (SELECT count(*) FROM pool) - 1), 0)
		ORDER BY n DESC, id DESC LIMIT 1)
	SELECT ` + claimColumns + `, to_json(ARRAY(SELECT ` + commentFields + ` FROM (SELECT * FROM agora_comments
		WHERE claim_id = c.id ORDER BY id DESC LIMIT GREATEST($5::int, 0)) m ORDER BY m.id)) AS comments
	FROM agora_claims c WHERE c.id = (SELECT id FROM pick)`

// PickClaim implements slots.ClaimStore in one statement (pickClaimQuery).
func (s *Store) PickClaim(ctx context.Context, p slots.PickClaimParams) (slots.ClaimJob, error) {
	var r struct {
		claimRow
		Comments []byte `db:"comments"`
	}
	err := s.get(ctx, &r, pickClaimQuery, p.Domain, p.Pool, string(p.Strategy), p.Random, p.CommentLimit)
	if isNoRows(err) {
		return slots.ClaimJob{}, slots.ErrNoClaims
	}
	if err != nil {
		return slots.ClaimJob{}, interpretError(ctx, err)
	}
	c, err := r.claim()
	if err != nil {
		return slots.ClaimJob{}, err
	}
	comments, err := decodeComments(r.Comments)
	if err != nil {
		return slots.ClaimJob{}, err
	}
	return slots.ClaimJob{Claim: c, Comments: comments}, nil
}

// The columns the job queue's and the leases' indexes read, is_open and
// lease_due (migrations 031 and 038), are written by every statement that
// changes a slot's status or lease, as these say: is_open is status =
// 'open', lease_due the lease's expiry while the slot is taken with a lease
// (slots.Slot.Lapsed's test), else NULL. A finish leaves both as they were,
// so that it stays a HOT update.
const (
	openedColumns   = `is_open = true, lease_due = NULL`
	finishedColumns = `is_open = false, lease_due = NULL`
)

// takenColumns is the queue's columns of a slot taken with the lease
// expiry lease (an SQL expression, 0 for none).
func takenColumns(lease string) string {
	return `is_open = false, lease_due = NULLIF(` + lease + `::bigint, 0)`
}

const slotColumns = `id, claim_id, role, status, COALESCE(api_key_id, '') AS api_key_id, agent_name, agent_avatar_url,
	taken_at, done_at, created_at, lease_expires_at`

type slotRow struct {
	ID             string `db:"id"`
	ClaimID        string `db:"claim_id"`
	Role           string `db:"role"`
	Status         string `db:"status"`
	APIKeyID       string `db:"api_key_id"`
	AgentName      string `db:"agent_name"`
	AgentAvatarURL string `db:"agent_avatar_url"`
	TakenAt        int64  `db:"taken_at"`
	DoneAt         int64  `db:"done_at"`
	CreatedAt      int64  `db:"created_at"`
	LeaseExpiresAt int64  `db:"lease_expires_at"`
}

// columns implements scanned.
func (*slotRow) columns() []string { return slotRowColumns }

// fields implements scanned.
func (r *slotRow) fields() []any {
	return []any{&r.ID, &r.ClaimID, &r.Role, &r.Status, &r.APIKeyID, &r.AgentName, &r.AgentAvatarURL,
		&r.TakenAt, &r.DoneAt, &r.CreatedAt, &r.LeaseExpiresAt}
}

func (r slotRow) slot() slots.Slot {
	return slots.Slot{
		ID: r.ID, ClaimID: r.ClaimID, Role: slots.Role(r.Role), Status: slots.Status(r.Status),
		APIKeyID: r.APIKeyID, AgentName: r.AgentName, AgentAvatarURL: r.AgentAvatarURL,
		TakenAt: store.FromMillis(r.TakenAt), DoneAt: store.FromMillis(r.DoneAt),
		CreatedAt: store.FromMillis(r.CreatedAt), LeaseExpiresAt: store.FromMillis(r.LeaseExpiresAt),
	}
}

// ReplaceOpenSlots implements slots.SlotStore.
func (s *Store) ReplaceOpenSlots(ctx context.Context, claimID string, add []slots.Slot) error {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return interpretError(ctx, err)
	}
	defer tx.Rollback()
	var c struct {
		HasDraft bool   `db:"has_draft"`
		Domain   string `db:"domain"`
	}
	err = tx.GetContext(ctx, &c, `SELECT has_draft, domain FROM agora_claims WHERE id = $1 FOR UPDATE`, claimID)
	if isNoRows(err) {
		return slots.ErrClaimNotFound
	}
	if err != nil {
		return interpretError(ctx, err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM agora_role_slots WHERE claim_id = $1 AND status = 'open'`, claimID); err != nil {
		return interpretError(ctx, err)
	}
	ids := make([]string, len(add))
	roles := make([]string, len(add))
	created := make([]int64, len(add))
	for i, sl := range add {
		ids[i], roles[i], created[i] = sl.ID, string(sl.Role), store.Millis(sl.CreatedAt)
	}
	if _, err := tx.ExecContext(ctx, `
		INSERT INTO agora_role_slots (id, claim_id, role, status, created_at, ready, domain, is_open, lease_due)
		SELECT u.id, $1, u.role, 'open', u.created_at, $5, $6, true, NULL
		FROM unnest($2::text[], $3::text[], $4::bigint[]) AS u (id, role, created_at)`,
		claimID, pq.Array(ids), pq.Array(roles), pq.Array(created), c.HasDraft, c.Domain); err != nil {
		return interpretError(ctx, err)
	}
	return interpretError(ctx, tx.Commit())
}

// listSlotsQuery reads a claim's slots; its outer join answers "unknown
// claim" and "no slots" in one query. The slots are found through the
// holder index's claim_id (migration 032).
const listSlotsQuery = `
		SELECT true AS claim_exists, COALESCE(s.id, '') AS id, COALESCE(s.claim_id, '') AS claim_id,
			COALESCE(s.role, '') AS role, COALESCE(s.status, '') AS status, COALESCE(s.api_key_id, '') AS api_key_id,
			COALESCE(s.agent_name, '') AS agent_name, COALESCE(s.agent_avatar_url, '') AS agent_avatar_url,
			COALESCE(s.taken_at, 0) AS taken_at, COALESCE(s.done_at, 0) AS done_at,
			COALESCE(s.created_at, 0) AS created_at, COALESCE(s.lease_expires_at, 0) AS lease_expires_at
		FROM agora_claims c LEFT JOIN agora_role_slots s ON s.claim_id = c.id
		WHERE c.id = $1 ORDER BY s.id`

// ListSlots implements slots.SlotStore.
func (s *Store) ListSlots(ctx context.Context, claimID string) ([]slots.Slot, error) {
	var rows []struct {
		slotRow
		Exists bool `db:"claim_exists"`
	}
	err := s.db.SelectContext(ctx, &rows, listSlotsQuery, claimID)
	if err != nil {
		return nil, interpretError(ctx, err)
	}
	if len(rows) == 0 {
		return nil, slots.ErrClaimNotFound
	}
	out := []slots.Slot{}
	for _, r := range rows {
		if r.ID != "" {
			out = append(out, r.slot())
		}
	}
	return out, nil
}

// randomWindow is how many eligible slots a random pick chooses among: the
// next ones in the random order of the rnd column from a random point. A
// fixed window keeps the cost flat; choosing within it evens out the gaps
// between rnd values, which alone would favour slots after a wide gap.
const randomWindow = 16

// nextSlotQuery builds the job-queue query for one filter combination, so
// each can use its own partial index. Its parameters, in order: the role
// (when filtered), the domain (when filtered), the asking agent's key ID
// (when given), then for a random pick where the window starts and where in
// the window to pick, for the oldest how many eligible slots to pass over.
//
// An agent's query leaves out the slots of claims where it holds a slot, in
// the same statement (one snapshot): for each candidate met along the
// queue's index, one probe of the unique index agora_role_slots_holder
// (claim_id, api_key_id). The walk steps over at most the open slots of the
// claims the agent holds, whatever the table holds. OFFSET 0 keeps the
// NOT EXISTS a per-candidate probe: without it the planner may turn it into
// an anti-join against every seat the agent ever held, read from the holder
// index by its second column, a scan that grows with the table.
func nextSlotQuery(role, domain, agent, random bool) string {
	pick, _ := jobPick(nextSlotKey{role: role, domain: domain, agent: agent, random: random}, false, "1")
	return `WITH s AS (` + pick + `)` + jobSelect
}

// nextSlotKey says which filters a job-queue query has, and for a take's
// oldest-first pick whether it is spread (starts past a Skip).
type nextSlotKey struct{ role, domain, agent, random, spread bool }

var nextSlotQueries = func() map[nextSlotKey]string {
	m := map[nextSlotKey]string{}
	for _, role := range []bool{false, true} {
		for _, domain := range []bool{false, true} {
			for _, agent := range []bool{false, true} {
				for _, random := range []bool{false, true} {
					m[nextSlotKey{role: role, domain: domain, agent: agent, random: random}] = nextSlotQuery(role, domain, agent, random)
				}
			}
		}
	}
	return m
}()

// NextOpenSlot implements slots.SlotStore in one round trip.
func (s *Store) NextOpenSlot(ctx context.Context, p slots.NextSlotParams) (slots.Job, error) {
	q := nextSlotQueries[nextSlotKey{role: p.Role != "", domain: p.Domain != "", agent: p.AgentKeyID != "", random: p.Random >= 0}]
	args := jobArgs(p)
	if p.Random < 0 {
		args = append(args, p.Skip)
	}
	job, err := s.getJob(ctx, q, args)
	if isNoRows(err) {
		return slots.Job{}, slots.ErrNoJob
	}
	return job, err
}

// TakeSlot implements slots.SlotStore: one conditional UPDATE; the unique
// index on (claim_id, api_key_id) refuses a second seat on the claim. The
// second SELECT runs only when the UPDATE changed nothing, to tell an
// unknown slot from a taken one, in the same statement.
func (s *Store) TakeSlot(ctx context.Context, p slots.TakeParams) (slots.Slot, error) {
	var rows []struct {
		slotRow
		Updated bool `db:"updated"`
	}
	stmt, err := s.prepared(ctx, takeQuery)
	if err != nil {
		return slots.Slot{}, err
	}
	err = stmt.SelectContext(ctx, &rows,
		p.SlotID, p.ClaimID, p.Agent.KeyID, p.Agent.Name, p.Agent.AvatarURL, store.Millis(p.Now), store.Millis(p.LeaseUntil))
	if isUniqueViolation(err, "agora_role_slots_holder") {
		return slots.Slot{}, slots.ErrSlotHeld
	}
	if err != nil {
		return slots.Slot{}, interpretError(ctx, err)
	}
	switch {
	case len(rows) == 0:
		return slots.Slot{}, slots.ErrSlotNotFound
	case !rows[0].Updated:
		return slots.Slot{}, slots.ErrSlotTaken
	}
	return rows[0].slot(), nil
}

// takeQuery takes the slot when slots.Slot.Takeable (its WHERE is that
// rule, decided inside the one statement; lease_due <= now is
// slots.Slot.Lapsed, see takenColumns); storetest's SlotRules pins the
// copy to the Go function.
var takeQuery = `
		WITH upd AS (
			UPDATE agora_role_slots SET status = 'taken', api_key_id = $3, agent_name = $4, agent_avatar_url = $5,
				taken_at = $6, lease_expires_at = $7, ` + takenColumns("$7") + `
			WHERE id = $1 AND claim_id = $2
				AND (status = 'open' OR lease_due <= $6)
			RETURNING ` + slotColumns + `)
		SELECT true AS updated, * FROM upd
		UNION ALL
		SELECT false, ` + slotColumns + ` FROM agora_role_slots
		WHERE id = $1 AND claim_id = $2 AND NOT EXISTS (SELECT 1 FROM upd)`

// FinishSlot implements slots.SlotStore: the status change and the ledger
// credit are one statement, so a retried done never credits twice.
func (s *Store) FinishSlot(ctx context.Context, p slots.FinishParams) (slots.Slot, error) {
	var rows []struct {
		slotRow
		Updated bool `db:"updated"`
	}
	stmt, err := s.prepared(ctx, finishQuery)
	if err != nil {
		return slots.Slot{}, err
	}
	err = stmt.SelectContext(ctx, &rows, p.SlotID, p.ClaimID, p.KeyID, store.Millis(p.Now), p.Credit)
	if err != nil {
		return slots.Slot{}, interpretError(ctx, err)
	}
	if len(rows) == 0 {
		return slots.Slot{}, slots.ErrSlotNotFound
	}
	return finishOutcome(rows[0].slotRow, rows[0].Updated, p)
}

// finishQuery finishes the slot (finishOneSteps) and answers it
// (finishOneAnswer).
var finishQuery = `WITH ` + finishOneSteps("$1", "$2", "$3", "$4", "$5") + finishOneAnswer("$1", "$2", "")

// finishOneSteps are the CTEs upd and credit that finish one slot, given as
// SQL expressions of its ID, claim ID, the finishing key's ID, the time and
// the credit, when slots.Slot.FinishError is nil (upd's WHERE is that rule,
// decided inside the one statement; finishOutcome names the refusal with
// the Go function; storetest's SlotRules pins them).
func finishOneSteps(slot, claim, key, at, credit string) string {
	return fmt.Sprintf(`
		upd AS (
			UPDATE agora_role_slots SET status = 'done', done_at = %[4]s, `+finishedColumns+`
			WHERE id = %[1]s AND claim_id = %[2]s AND status = 'taken' AND api_key_id = %[3]s
				AND (lease_due IS NULL OR lease_due > %[4]s)
			RETURNING `+slotColumns+`),
		credit AS (
			INSERT INTO agora_ledger (api_key_id, amount, reason, ref, created_at)
			SELECT api_key_id, %[5]s, 'role_slot_done', id, done_at FROM upd)`, slot, claim, key, at, credit)
}

// finishOneAnswer answers finishOneSteps: whether the slot was finished,
// and the slot as done or as it is, then the columns extra (empty, or
// starting with a comma); no row for a slot not of its claim.
func finishOneAnswer(slot, claim, extra string) string {
	return `
		SELECT true AS updated, upd.*` + extra + ` FROM upd
		UNION ALL
		SELECT false, ` + slotColumns + extra + ` FROM agora_role_slots
		WHERE id = ` + slot + ` AND claim_id = ` + claim + ` AND NOT EXISTS (SELECT 1 FROM upd)`
}

// ReleaseExpiredSlots implements slots.SlotStore: it reopens the slots
// slots.Slot.Lapsed says have lapsed, found by the leases index on
// lease_due (migration 031: the expiry of a slot taken with a lease, else
// NULL).
func (s *Store) ReleaseExpiredSlots(ctx context.Context, now time.Time) (int, error) {
	res, err := s.db.ExecContext(ctx, `
		UPDATE agora_role_slots SET status = 'open', api_key_id = NULL, agent_name = '', agent_avatar_url = '',
			taken_at = 0, lease_expires_at = 0, `+openedColumns+`
		WHERE lease_due <= $1`, store.Millis(now))
	if err != nil {
		return 0, interpretError(ctx, err)
	}
	n, err := res.RowsAffected()
	return int(n), interpretError(ctx, err)
}

// CreateKey implements identity.KeyStore.
func (s *Store) CreateKey(ctx context.Context, k identity.Key) error {
	scopes := make([]string, len(k.Scopes))
	for i, sc := range k.Scopes {
		scopes[i] = string(sc)
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO agora_keys (id, name, avatar_url, scopes, hash, created_at, revoked_at, signing_key_address)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, k.ID, k.Name, k.AvatarURL, pq.Array(scopes), k.Hash, store.Millis(k.CreatedAt), store.Millis(k.RevokedAt), k.SigningKeyAddress)
	if isUniqueViolation(err, "agora_keys_pkey") {
		return identity.ErrKeyExists
	}
	if isUniqueViolation(err, "agora_keys_name") {
		return identity.ErrKeyNameTaken
	}
	return interpretError(ctx, err)
}

type keyRow struct {
	ID        string         `db:"id"`
	Name      string         `db:"name"`
	AvatarURL string         `db:"avatar_url"`
	Scopes    pq.StringArray `db:"scopes"`
	Hash      []byte         `db:"hash"`
	CreatedAt int64          `db:"created_at"`
	RevokedAt int64          `db:"revoked_at"`
	Signing   string         `db:"signing_key_address"`
}

func (r keyRow) key() identity.Key {
	k := identity.Key{ID: r.ID, Name: r.Name, AvatarURL: r.AvatarURL, Hash: r.Hash, CreatedAt: store.FromMillis(r.CreatedAt), RevokedAt: store.FromMillis(r.RevokedAt),
		SigningKeyAddress: r.Signing, Scopes: []identity.Scope{}}
	for _, sc := range r.Scopes {
		k.Scopes = append(k.Scopes, identity.Scope(sc))
	}
	return k
}

const keyColumns = `id, name, avatar_url, scopes, hash, created_at, revoked_at, signing_key_address`

// GetKey implements identity.KeyStore.
func (s *Store) GetKey(ctx context.Context, id string) (identity.Key, error) {
	var r keyRow
	err := s.get(ctx, &r, `SELECT `+keyColumns+` FROM agora_keys WHERE id = $1`, id)
	if isNoRows(err) {
		return identity.Key{}, identity.ErrKeyNotFound
	}
	if err != nil {
		return identity.Key{}, interpretError(ctx, err)
	}
	return r.key(), nil
}

// GetKeys implements identity.KeyStore in one statement.
func (s *Store) GetKeys(ctx context.Context, ids []string) ([]identity.Key, error) {
	stmt, err := s.prepared(ctx, `SELECT `+keyColumns+` FROM agora_keys WHERE id = ANY ($1::text[])`)
	if err != nil {
		return nil, err
	}
	var rows []keyRow
	if err := stmt.SelectContext(ctx, &rows, pq.Array(ids)); err != nil {
		return nil, interpretError(ctx, err)
	}
	out := make([]identity.Key, len(rows))
	for i, r := range rows {
		out[i] = r.key()
	}
	return out, nil
}

// ListKeys implements identity.KeyStore.
func (s *Store) ListKeys(ctx context.Context) ([]identity.Key, error) {
	var rows []keyRow
	if err := s.db.SelectContext(ctx, &rows, `SELECT `+keyColumns+` FROM agora_keys ORDER BY id`); err != nil {
		return nil, interpretError(ctx, err)
	}
	out := make([]identity.Key, len(rows))
	for i, r := range rows {
		out[i] = r.key()
	}
	return out, nil
}

// RevokeKey implements identity.KeyStore.
func (s *Store) RevokeKey(ctx context.Context, id string, at time.Time) error {
	var found bool
	err := s.db.GetContext(ctx, &found, `
		WITH upd AS (UPDATE agora_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at = 0 RETURNING id)
		SELECT EXISTS (SELECT 1 FROM upd) OR EXISTS (SELECT 1 FROM agora_keys WHERE id = $1)`, id, store.Millis(at))
	if err != nil {
		return interpretError(ctx, err)
	}
	if !found {
		return identity.ErrKeyNotFound
	}
	return nil
}

// SetSigningKey implements identity.KeyStore.
func (s *Store) SetSigningKey(ctx context.Context, id, address string) error {
	return s.execOne(ctx, identity.ErrKeyNotFound, `UPDATE agora_keys SET signing_key_address = $2 WHERE id = $1`, id, address)
}

// Balance implements identity.KeyStore.
func (s *Store) Balance(ctx context.Context, keyID string) (int64, error) {
	var n int64
	err := s.get(ctx, &n, `SELECT COALESCE(sum(amount), 0) FROM agora_ledger WHERE api_key_id = $1`, keyID)
	return n, interpretError(ctx, err)
}

// deviceForget is how long after its expiry a device login is forgotten.
const deviceForget = 24 * time.Hour

const deviceColumns = `id, user_code, name, agent_model, avatar_url, scopes, status, created_at, expires_at, approved_by, approved_at, consumed_at`

type deviceRow struct {
	ID         string         `db:"id"`
	UserCode   string         `db:"user_code"`
	Name       string         `db:"name"`
	AgentModel string         `db:"agent_model"`
	AvatarURL  string         `db:"avatar_url"`
	Scopes     pq.StringArray `db:"scopes"`
	Status     string         `db:"status"`
	CreatedAt  int64          `db:"created_at"`
	ExpiresAt  int64          `db:"expires_at"`
	ApprovedBy string         `db:"approved_by"`
	ApprovedAt int64          `db:"approved_at"`
	ConsumedAt int64          `db:"consumed_at"`
}

func (r deviceRow) device() identity.DeviceCode {
	d := identity.DeviceCode{ID: r.ID, UserCode: r.UserCode, Name: r.Name, AgentModel: r.AgentModel, AvatarURL: r.AvatarURL,
		Scopes: []identity.Scope{}, Status: identity.DeviceStatus(r.Status),
		CreatedAt: store.FromMillis(r.CreatedAt), ExpiresAt: store.FromMillis(r.ExpiresAt),
		ApprovedBy: r.ApprovedBy, ApprovedAt: store.FromMillis(r.ApprovedAt), ConsumedAt: store.FromMillis(r.ConsumedAt)}
	for _, sc := range r.Scopes {
		d.Scopes = append(d.Scopes, identity.Scope(sc))
	}
	return d
}

// CreateDeviceCode implements identity.DeviceStore. Logins expired more than
// a day ago are deleted on the way.
func (s *Store) CreateDeviceCode(ctx context.Context, d identity.DeviceCode) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM agora_device_codes WHERE expires_at < $1`, store.Millis(d.CreatedAt.Add(-deviceForget))); err != nil {
		return interpretError(ctx, err)
	}
	scopes := make([]string, len(d.Scopes))
	for i, sc := range d.Scopes {
		scopes[i] = string(sc)
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO agora_device_codes (`+deviceColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		d.ID, d.UserCode, d.Name, d.AgentModel, d.AvatarURL, pq.Array(scopes), string(d.Status),
		store.Millis(d.CreatedAt), store.Millis(d.ExpiresAt), d.ApprovedBy, store.Millis(d.ApprovedAt), store.Millis(d.ConsumedAt))
	if isUniqueViolation(err, "") {
		return identity.ErrDeviceCodeExists
	}
	return interpretError(ctx, err)
}

// DeviceCodeByUserCode implements identity.DeviceStore.
func (s *Store) DeviceCodeByUserCode(ctx context.Context, userCode string) (identity.DeviceCode, error) {
	var r deviceRow
	err := s.db.GetContext(ctx, &r, `SELECT `+deviceColumns+` FROM agora_device_codes WHERE user_code = $1`, userCode)
	if isNoRows(err) {
		return identity.DeviceCode{}, identity.ErrDeviceCodeNotFound
	}
	if err != nil {
		return identity.DeviceCode{}, interpretError(ctx, err)
	}
	return r.device(), nil
}

// ApproveDeviceCode implements identity.DeviceStore: one conditional UPDATE;
// when it changes nothing, the row as it is tells why.
func (s *Store) ApproveDeviceCode(ctx context.Context, userCode, by string, now time.Time) (identity.DeviceCode, error) {
	var r deviceRow
	err := s.db.GetContext(ctx, &r, `UPDATE agora_device_codes SET status = 'approved', approved_by = $2, approved_at = $3
		WHERE user_code = $1 AND status = 'pending' AND expires_at > $3 RETURNING `+deviceColumns, userCode, by, store.Millis(now))
	if err == nil {
		return r.device(), nil
	}
	if !isNoRows(err) {
		return identity.DeviceCode{}, interpretError(ctx, err)
	}
	d, err := s.DeviceCodeByUserCode(ctx, userCode)
	switch {
	case err != nil:
		return identity.DeviceCode{}, err
	case d.Expired(now):
		return identity.DeviceCode{}, identity.ErrDeviceCodeExpired
	default:
		return identity.DeviceCode{}, identity.ErrDeviceCodeUsed
	}
}

// ConsumeDeviceCode implements identity.DeviceStore: one statement
// consumes an approved login and inserts its key, so a refused key (a
// unique violation) leaves the login as it was; when it changes nothing,
// the row as it is tells why (a status only ever moves forward, so the
// reading is sound).
func (s *Store) ConsumeDeviceCode(ctx context.Context, id string, key identity.Key) (identity.DeviceCode, error) {
	var r deviceRow
	now := store.Millis(key.CreatedAt)
	err := s.db.GetContext(ctx, &r, `WITH d AS (
			UPDATE agora_device_codes SET status = 'consumed', consumed_at = $2
			WHERE id = $1 AND status = 'approved' AND expires_at > $2 RETURNING `+deviceColumns+`
		), k AS (
			INSERT INTO agora_keys (id, name, avatar_url, scopes, hash, created_at)
			SELECT $3, d.name, d.avatar_url, d.scopes, $4, $2 FROM d
		)
		SELECT `+deviceColumns+` FROM d`, id, now, key.ID, key.Hash)
	if err == nil {
		return r.device(), nil
	}
	switch {
	case isUniqueViolation(err, "agora_keys_pkey"):
		return identity.DeviceCode{}, identity.ErrKeyExists
	case isUniqueViolation(err, "agora_keys_name"):
		return identity.DeviceCode{}, identity.ErrKeyNameTaken
	case !isNoRows(err):
		return identity.DeviceCode{}, interpretError(ctx, err)
	}
	err = s.db.GetContext(ctx, &r, `SELECT `+deviceColumns+` FROM agora_device_codes WHERE id = $1`, id)
	if isNoRows(err) {
		return identity.DeviceCode{}, identity.ErrDeviceCodeNotFound
	}
	if err != nil {
		return identity.DeviceCode{}, interpretError(ctx, err)
	}
	d := r.device()
	switch {
	case d.Status == identity.DeviceConsumed:
		return identity.DeviceCode{}, identity.ErrDeviceCodeConsumed
	case d.Expired(key.CreatedAt):
		return identity.DeviceCode{}, identity.ErrDeviceCodeExpired
	}
	return d, nil // pending
}
