package pgstore

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// calibrateQuery stores a calibration and writes its top domain ($9) to
// the claim (domainWrite). AddCalibration runs it once it holds the
// claim's row lock (withClaimLocked).
var calibrateQuery = `
	WITH cal AS (
		INSERT INTO agora_calibrations (id, claim_id, domains, scores, total, editor_id, editor_name, created_at)
		VALUES ($2, $1, $3, $4, $5, $6, $7, $8) RETURNING claim_id),
	` + domainWrite("cal", "$9", "$8") + `
	SELECT count(*) FROM cal`

// AddCalibration implements slots.ClaimStore in one transaction that
// holds the claim's row lock: concurrent calibrations of a claim are
// stored, and their seq taken, one after the other.
func (s *Store) AddCalibration(ctx context.Context, c slots.Calibration) error {
	domains := make([]string, len(c.Scores))
	scores := make([]int64, len(c.Scores))
	for i, sc := range c.Scores {
		domains[i], scores[i] = sc.Domain, int64(sc.Score)
	}
	found := false
	err := s.withClaimLocked(ctx, c.ClaimID, func(tx *sqlx.Tx, ok bool) error {
		if found = ok; !ok {
			return nil
		}
		_, err := tx.ExecContext(ctx, calibrateQuery, c.ClaimID, c.ID, pq.Array(domains), pq.Array(scores), c.Total,
			c.EditorID, c.EditorName, store.Millis(c.CreatedAt), c.TopDomain())
		return err
	})
	if err != nil {
		return interpretError(ctx, err)
	}
	if !found {
		return slots.ErrClaimNotFound
	}
	return nil
}

// listCalibrationsQuery reads a claim's latest calibrations, the last
// stored first; its outer join answers "unknown claim" and "no
// calibration" in one query, as listSlotsQuery does.
const listCalibrationsQuery = `
	SELECT k.seq, COALESCE(k.id, '') AS id, COALESCE(k.domains, '{}') AS domains, COALESCE(k.scores, '{}') AS scores,
		COALESCE(k.total, 0) AS total, COALESCE(k.editor_id, '') AS editor_id, COALESCE(k.editor_name, '') AS editor_name,
		COALESCE(k.created_at, 0) AS created_at
	FROM agora_claims c LEFT JOIN LATERAL (
		SELECT * FROM agora_calibrations k WHERE k.claim_id = c.id ORDER BY k.seq DESC LIMIT $2) k ON true
	WHERE c.id = $1 ORDER BY k.seq DESC`

// ListCalibrations implements slots.ClaimStore.
func (s *Store) ListCalibrations(ctx context.Context, claimID string, limit int) ([]slots.Calibration, error) {
	var rows []struct {
		Seq        *int64         `db:"seq"`
		ID         string         `db:"id"`
		Domains    pq.StringArray `db:"domains"`
		Scores     pq.Int64Array  `db:"scores"`
		Total      int            `db:"total"`
		EditorID   string         `db:"editor_id"`
		EditorName string         `db:"editor_name"`
		CreatedAt  int64          `db:"created_at"`
	}
	if err := s.db.SelectContext(ctx, &rows, listCalibrationsQuery, claimID, max(limit, 0)); err != nil {
		return nil, interpretError(ctx, err)
	}
	if len(rows) == 0 {
		return nil, slots.ErrClaimNotFound
	}
	out := []slots.Calibration{}
	for _, r := range rows {
		if r.Seq == nil { // the claim, without a calibration
			continue
		}
		if len(r.Scores) != len(r.Domains) {
			return nil, fmt.Errorf("pgstore: calibration %s: %d domains and %d scores", r.ID, len(r.Domains), len(r.Scores))
		}
		c := slots.Calibration{ID: r.ID, ClaimID: claimID, Scores: make([]slots.CalibrationScore, len(r.Domains)), Total: r.Total,
			EditorID: r.EditorID, EditorName: r.EditorName, CreatedAt: store.FromMillis(r.CreatedAt)}
		for i, d := range r.Domains {
			c.Scores[i] = slots.CalibrationScore{Domain: d, Score: int(r.Scores[i])}
		}
		out = append(out, c)
	}
	return out, nil
}
