package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

var _ prism.Store = (*Store)(nil)

// PutProtocol implements prism.Store.
func (s *Store) PutProtocol(ctx context.Context, p prism.Protocol) error {
	doc, err := json.Marshal(p)
	if err != nil {
		return err
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO agora_protocols (id, doc) VALUES ($1, $2)
		ON CONFLICT (id) DO UPDATE SET doc = EXCLUDED.doc`, p.ID, doc)
	return interpretError(ctx, err)
}

// GetProtocol implements prism.Store.
func (s *Store) GetProtocol(ctx context.Context, id string) (prism.Protocol, error) {
	var doc []byte
	err := s.db.GetContext(ctx, &doc, `SELECT doc FROM agora_protocols WHERE id = $1`, id)
	if isNoRows(err) {
		return prism.Protocol{}, prism.ErrProtocolNotFound
	}
	if err != nil {
		return prism.Protocol{}, interpretError(ctx, err)
	}
	var p prism.Protocol
	if err := json.Unmarshal(doc, &p); err != nil {
		return prism.Protocol{}, fmt.Errorf("pgstore: protocol %s: %w", id, err)
	}
	return p, nil
}

// ListProtocols implements prism.Store.
func (s *Store) ListProtocols(ctx context.Context) ([]prism.Protocol, error) {
	var docs [][]byte
	if err := s.db.SelectContext(ctx, &docs, `SELECT doc FROM agora_protocols ORDER BY id`); err != nil {
		return nil, interpretError(ctx, err)
	}
	out := make([]prism.Protocol, len(docs))
	for i, d := range docs {
		if err := json.Unmarshal(d, &out[i]); err != nil {
			return nil, fmt.Errorf("pgstore: protocol: %w", err)
		}
	}
	return out, nil
}

// workColumns turns a pipeline's open slots into the arrays the work-index
// statements unnest.
func workColumns(p prism.Pipeline) (ids, roles []string, layers []int64) {
	for _, sl := range p.OpenSlots() {
		ids = append(ids, sl.ID)
		roles = append(roles, sl.Role)
		layers = append(layers, int64(sl.Layer))
	}
	return ids, roles, layers
}

// CreateClaimPipeline implements prism.Store in one statement: the claim,
// its pipeline and the pipeline's work index, each insert hanging off the
// one before, so a failure anywhere leaves nothing.
func (s *Store) CreateClaimPipeline(ctx context.Context, c slots.Claim, p prism.Pipeline) error {
	sources, err := encodeSources(c.Sources)
	if err != nil {
		return err
	}
	doc, err := json.Marshal(p)
	if err != nil {
		return err
	}
	ids, roles, layers := workColumns(p)
	_, err = s.db.ExecContext(ctx, `
		WITH claim AS (
			INSERT INTO agora_claims (id, title, body, domain, created_at, sources, protocol, author_id, author_name, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $14, $15, $16, $17) RETURNING id, protocol, created_at)`+countProtocolUse+`,
		pipe AS (
			INSERT INTO agora_pipelines (claim_id, version, doc, next_lease) SELECT id, $7, $8, $9 FROM claim RETURNING claim_id)
		INSERT INTO agora_stage_work (slot_id, claim_id, role, layer, domain)
		SELECT u.id, pipe.claim_id, u.role, u.layer, $13 FROM pipe, unnest($10::text[], $11::text[], $12::int[]) AS u (id, role, layer)`,
		c.ID, c.Title, c.Body, c.Domain, store.Millis(c.CreatedAt), sources, p.Version, doc, store.Millis(p.NextLease()), pq.Array(ids), pq.Array(roles), pq.Array(layers), p.Domain, c.Protocol, c.AuthorID, c.AuthorName,
		store.Millis(c.UpdatedAt))
	switch {
	case isUniqueViolation(err, "agora_claims_pkey"):
		return slots.ErrClaimExists
	case isUniqueViolation(err, "agora_pipelines_pkey"):
		return prism.ErrPipelineExists
	}
	return interpretError(ctx, err)
}

// GetPipeline implements prism.Store.
func (s *Store) GetPipeline(ctx context.Context, claimID string) (prism.Pipeline, error) {
	var doc []byte
	err := s.get(ctx, &doc, `SELECT doc FROM agora_pipelines WHERE claim_id = $1`, claimID)
	if isNoRows(err) {
		return prism.Pipeline{}, prism.ErrPipelineNotFound
	}
	if err != nil {
		return prism.Pipeline{}, interpretError(ctx, err)
	}
	var p prism.Pipeline
	if err := json.Unmarshal(doc, &p); err != nil {
		return prism.Pipeline{}, fmt.Errorf("pgstore: pipeline %s: %w", claimID, err)
	}
	return p, nil
}

// updatePipelineQuery saves a pipeline and its effects in one statement:
// the compare-and-set, the work index (rows of slots no longer open go,
// new open slots come; the two sets are disjoint), the ledger credits, and
// a new domain on the claim and its role slots (domainWrite). Every part
// hangs off upd, so nothing happens when the version has moved on; then,
// and only then, cur reads the stored pipeline's document. That read locks
// the row FOR SHARE: under READ COMMITTED a locking read returns the row's
// newest committed version, where a plain one would return the statement's
// snapshot — stale when the UPDATE waited for a concurrent save and then
// found the version moved. The lock ends with the statement.
var updatePipelineQuery = `
	WITH upd AS (
		UPDATE agora_pipelines SET version = $2, doc = $3, next_lease = $4
		WHERE claim_id = $1 AND version = $2 - 1 RETURNING claim_id),
	gone AS (
		DELETE FROM agora_stage_work w USING upd
		WHERE w.claim_id = upd.claim_id AND NOT (w.slot_id = ANY ($5::text[]))),
	work AS (
		INSERT INTO agora_stage_work (slot_id, claim_id, role, layer, domain)
		SELECT u.id, upd.claim_id, u.role, u.layer, $8 FROM upd, unnest($5::text[], $6::text[], $7::int[]) AS u (id, role, layer)
		ON CONFLICT (slot_id) DO UPDATE SET domain = EXCLUDED.domain),
	credit AS (
		INSERT INTO agora_ledger (api_key_id, amount, reason, ref, created_at)
		SELECT c.key, c.amount, 'stage_slot_done', c.ref, $12 FROM upd, unnest($9::text[], $10::bigint[], $11::text[]) AS c (key, amount, ref)),
	` + domainWrite("upd", "$13", "$12") + `,
	cur AS (
		SELECT doc FROM agora_pipelines WHERE claim_id = $1 AND NOT EXISTS (SELECT 1 FROM upd) FOR SHARE)
	SELECT EXISTS (SELECT 1 FROM upd) AS saved, (SELECT doc FROM cur) AS doc`

// UpdatePipeline implements prism.Store in one round trip, which also
// reads the stored pipeline when the comparison fails.
func (s *Store) UpdatePipeline(ctx context.Context, next prism.Pipeline, fx prism.Effects) (prism.Pipeline, error) {
	doc, err := json.Marshal(next)
	if err != nil {
		return prism.Pipeline{}, err
	}
	ids, roles, layers := workColumns(next)
	var keys, refs []string
	var amounts []int64
	for _, c := range fx.Credits {
		keys, amounts, refs = append(keys, c.KeyID), append(amounts, c.Amount), append(refs, c.Ref)
	}
	stmt, err := s.prepared(ctx, updatePipelineQuery)
	if err != nil {
		return prism.Pipeline{}, err
	}
	var r struct {
		Saved bool   `db:"saved"`
		Doc   []byte `db:"doc"`
	}
	args := []any{next.ClaimID, next.Version, doc, store.Millis(next.NextLease()),
		pq.Array(ids), pq.Array(roles), pq.Array(layers), next.Domain,
		pq.Array(keys), pq.Array(amounts), pq.Array(refs), store.Millis(next.UpdatedAt), fx.Domain}
	if fx.Domain == "" {
		err = stmt.GetContext(ctx, &r, args...)
	} else {
		// A pipeline without its claim does not happen: the two are
		// created in one statement and never deleted.
		err = s.withClaimLocked(ctx, next.ClaimID, func(tx *sqlx.Tx, _ bool) error {
			return tx.StmtxContext(ctx, stmt).GetContext(ctx, &r, args...)
		})
	}
	switch {
	case err != nil:
		return prism.Pipeline{}, interpretError(ctx, err)
	case r.Saved:
		return prism.Pipeline{}, nil
	case r.Doc == nil:
		return prism.Pipeline{}, prism.ErrPipelineNotFound
	}
	var cur prism.Pipeline
	if err := json.Unmarshal(r.Doc, &cur); err != nil {
		return prism.Pipeline{}, fmt.Errorf("pgstore: pipeline %s: %w", next.ClaimID, err)
	}
	return cur, prism.ErrVersionConflict
}

// FindWork implements prism.Store: the oldest matching rows of the work
// index past q.After (without the consensus slots' rows for PhaseWork); a
// random pick shuffles them.
func (s *Store) FindWork(ctx context.Context, q prism.WorkQuery) ([]prism.WorkRef, error) {
	var where []string
	var args []any
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	if q.Role != "" {
		add("role = $%d", q.Role)
	}
	if q.Layer != nil {
		add("layer = $%d", *q.Layer)
	}
	if q.Domain != "" {
		add("domain = $%d", q.Domain)
	}
	if q.Phase == prism.PhaseWork {
		add("role <> $%d", prism.RoleConsensus)
	}
	if q.After != "" {
		add("slot_id > $%d", q.After)
	}
	query := `SELECT claim_id, slot_id FROM agora_stage_work`
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, " AND ")
	}
	args = append(args, max(q.Limit, 0))
	query += fmt.Sprintf(` ORDER BY slot_id LIMIT $%d`, len(args))
	stmt, err := s.prepared(ctx, query)
	if err != nil {
		return nil, err
	}
	var rows []struct {
		ClaimID string `db:"claim_id"`
		SlotID  string `db:"slot_id"`
	}
	if err := stmt.SelectContext(ctx, &rows, args...); err != nil {
		return nil, interpretError(ctx, err)
	}
	out := make([]prism.WorkRef, len(rows))
	for i, r := range rows {
		out[i] = prism.WorkRef{ClaimID: r.ClaimID, SlotID: r.SlotID}
	}
	if q.Random >= 0 {
		rng := rand.New(rand.NewPCG(uint64(q.Random*(1<<53)), 0))
		rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	}
	return out, nil
}

// LapsedPipelines implements prism.Store.
func (s *Store) LapsedPipelines(ctx context.Context, now time.Time) ([]string, error) {
	var ids []string
	err := s.db.SelectContext(ctx, &ids, `SELECT claim_id FROM agora_pipelines WHERE next_lease <> 0 AND next_lease <= $1 ORDER BY claim_id`, store.Millis(now))
	return ids, interpretError(ctx, err)
}

// AddConsensus implements prism.Store in one statement, which inserts
// nothing for an unknown claim.
func (s *Store) AddConsensus(ctx context.Context, claimID string, rec prism.ConsensusRecord) error {
	doc, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("pgstore: encode consensus: %w", err)
	}
	res, err := s.db.ExecContext(ctx, `INSERT INTO agora_consensus (id, claim_id, doc)
		SELECT $1, $2, $3 WHERE EXISTS (SELECT 1 FROM agora_claims WHERE id = $2)`, rec.ID, claimID, doc)
	if err != nil {
		return interpretError(ctx, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return interpretError(ctx, err)
	} else if n == 0 {
		return slots.ErrClaimNotFound
	}
	return nil
}

// ConsensusRecords implements prism.Store.
func (s *Store) ConsensusRecords(ctx context.Context, claimID string, limit int) ([]prism.ConsensusRecord, error) {
	var docs [][]byte
	if err := s.db.SelectContext(ctx, &docs, `SELECT doc FROM agora_consensus WHERE claim_id = $1 ORDER BY seq DESC LIMIT $2`, claimID, max(limit, 0)); err != nil {
		return nil, interpretError(ctx, err)
	}
	out := make([]prism.ConsensusRecord, len(docs))
	for i, d := range docs {
		if err := json.Unmarshal(d, &out[i]); err != nil {
			return nil, fmt.Errorf("pgstore: consensus of %s: %w", claimID, err)
		}
	}
	return out, nil
}

// withClaimLocked runs fn in a transaction that first locks the claim's
// row, for a statement that writes the claim's domain to its role slots
// (domainWrite): a statement's snapshot is taken before it waits for the
// row, so without the lock taken first it would miss the slots that a
// concurrent ReplaceOpenSlots, holding the row, inserts. found says
// whether the claim is there; one that is not locks nothing.
func (s *Store) withClaimLocked(ctx context.Context, claimID string, fn func(tx *sqlx.Tx, found bool) error) error {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `SELECT 1 FROM agora_claims WHERE id = $1 FOR UPDATE`, claimID)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if err := fn(tx, n > 0); err != nil {
		return err
	}
	return tx.Commit()
}
