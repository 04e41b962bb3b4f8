package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"github.com/agorahq/agora/slots"
)

// jobPick is the job queue's pick for one filter combination, and how many
// parameters it uses (see nextSlotQuery for their order). With lock it
// locks the slot it returns, FOR UPDATE SKIP LOCKED: a slot another
// statement is taking at that moment is passed over for the next eligible
// one, and a slot changed since the statement's snapshot is checked again
// against the filters (no longer open: passed over).
func jobPick(k nextSlotKey, lock bool) (string, int) {
	where := `q.status = 'open' AND q.ready`
	n := 0
	param := func() string { n++; return fmt.Sprintf("$%d", n) }
	if k.role {
		where += ` AND q.role = ` + param()
	}
	if k.domain {
		where += ` AND q.domain = ` + param()
	}
	if k.agent {
		where += ` AND NOT EXISTS (SELECT 1 FROM agora_role_slots h WHERE h.claim_id = q.claim_id AND h.api_key_id = ` + param() + ` OFFSET 0)`
	}
	oldest := `SELECT q.* FROM agora_role_slots q WHERE ` + where + ` ORDER BY q.id LIMIT 1`
	if !k.random {
		if lock {
			oldest += ` FOR UPDATE SKIP LOCKED`
		}
		return oldest, n
	}
	start, at := param(), param()
	window := fmt.Sprintf(`WITH w AS MATERIALIZED (
			(SELECT q.id, q.rnd FROM agora_role_slots q WHERE %[1]s AND q.rnd >= %[3]s::float8 ORDER BY q.rnd LIMIT %[2]d)
			UNION ALL
			(SELECT q.id, q.rnd FROM agora_role_slots q WHERE %[1]s AND q.rnd < %[3]s::float8 ORDER BY q.rnd LIMIT %[2]d)
			LIMIT %[2]d)`, where, randomWindow, start)
	if !lock {
		return window + fmt.Sprintf(`
		SELECT * FROM agora_role_slots WHERE id = (
			SELECT id FROM w OFFSET floor(%[1]s::float8 * (SELECT count(*) FROM w))::bigint LIMIT 1)`, at), n
	}
	// Locking: from the window's chosen position onwards (wrapping round
	// within the window), the first slot not being taken; when the whole
	// window is being taken, the oldest slot that is not.
	return window + fmt.Sprintf(`,
		o AS (SELECT id, row_number() OVER () - 1 AS i, count(*) OVER () AS n FROM w),
		a AS (SELECT q.* FROM agora_role_slots q JOIN o ON o.id = q.id WHERE %[1]s
			ORDER BY (o.i + o.n - floor(%[2]s::float8 * o.n)::bigint) %% o.n LIMIT 1 FOR UPDATE OF q SKIP LOCKED),
		b AS (%[3]s FOR UPDATE SKIP LOCKED)
		SELECT * FROM a UNION ALL SELECT * FROM b LIMIT 1`, where, at, oldest), n
}

// jobSelect turns the slot s into a job: the slot, its claim and the
// claim's comments, in one row.
const jobSelect = `
		SELECT s.id, s.claim_id, s.role, s.status, COALESCE(s.api_key_id, '') AS api_key_id, s.agent_name,
			s.agent_avatar_url, s.taken_at, s.done_at, s.created_at, s.lease_expires_at,
			c.title, c.body, c.domain, c.created_at AS claim_created_at, ` + commentsJSON + ` AS comments
		FROM s JOIN agora_claims c ON c.id = s.claim_id`

// jobArgs are the pick's parameters for p, in jobPick's order.
func jobArgs(p slots.NextSlotParams) []any {
	var args []any
	if p.Role != "" {
		args = append(args, string(p.Role))
	}
	if p.Domain != "" {
		args = append(args, p.Domain)
	}
	if p.AgentKeyID != "" {
		args = append(args, p.AgentKeyID)
	}
	if p.Random >= 0 {
		// The window position comes from the digits of p.Random below the
		// first ones, which picked where the window starts.
		_, frac := math.Modf(p.Random * 4096)
		args = append(args, p.Random, frac)
	}
	return args
}

// getJob runs a job query (its result shaped by jobSelect); sql.ErrNoRows
// when it found none.
func (s *Store) getJob(ctx context.Context, query string, args []any) (slots.Job, error) {
	var r struct {
		slotRow
		Title          string `db:"title"`
		Body           string `db:"body"`
		Domain         string `db:"domain"`
		ClaimCreatedAt int64  `db:"claim_created_at"`
		Comments       []byte `db:"comments"`
	}
	stmt, err := s.prepared(ctx, query)
	if err != nil {
		return slots.Job{}, err
	}
	err = stmt.GetContext(ctx, &r, args...)
	if isNoRows(err) {
		return slots.Job{}, err
	}
	if err != nil {
		return slots.Job{}, interpretError(ctx, err)
	}
	job := slots.Job{
		Slot:  r.slot(),
		Claim: slots.Claim{ID: r.ClaimID, Title: r.Title, Body: r.Body, Domain: r.Domain, CreatedAt: r.ClaimCreatedAt},
	}
	if err := json.Unmarshal(r.Comments, &job.Comments); err != nil {
		return slots.Job{}, fmt.Errorf("pgstore: comments: %w", err)
	}
	return job, nil
}

// takeNextQuery picks as jobPick with a lock and takes the slot in the same
// statement; after the pick's parameters come the key ID, agent name,
// avatar URL, now and lease expiry.
func takeNextQuery(k nextSlotKey) string {
	pick, n := jobPick(k, true)
	return fmt.Sprintf(`WITH p AS (%s),
		s AS (UPDATE agora_role_slots t SET status = 'taken', api_key_id = $%d, agent_name = $%d,
				agent_avatar_url = $%d, taken_at = $%d, lease_expires_at = $%d
			FROM p WHERE t.id = p.id RETURNING t.*)`, pick, n+1, n+2, n+3, n+4, n+5) + jobSelect
}

var takeNextQueries = func() map[nextSlotKey]string {
	m := map[nextSlotKey]string{}
	for k := range nextSlotQueries {
		if k.agent {
			m[k] = takeNextQuery(k)
		}
	}
	return m
}()

// takeNextAttempts bounds the retries of TakeNextSlot when the agent's
// concurrent take won the claim the statement picked.
const takeNextAttempts = 8

// TakeNextSlot implements slots.SlotStore in one statement: the job
// queue's pick, locked with SKIP LOCKED, and the take. When the same
// agent's concurrent take seats it on the picked claim first, the unique
// index agora_role_slots_holder refuses the second seat and the statement
// is run again (the claim is then held, so the pick passes it over).
func (s *Store) TakeNextSlot(ctx context.Context, p slots.TakeNextParams) (slots.Job, error) {
	p.Next.AgentKeyID = p.Agent.KeyID
	q := takeNextQueries[nextSlotKey{p.Next.Role != "", p.Next.Domain != "", true, p.Next.Random >= 0}]
	args := append(jobArgs(p.Next), p.Agent.KeyID, p.Agent.Name, p.Agent.AvatarURL, p.Now, p.LeaseUntil)
	for attempt := 1; ; attempt++ {
		job, err := s.getJob(ctx, q, args)
		switch {
		case isNoRows(err):
			return slots.Job{}, slots.ErrNoJob
		case isUniqueViolation(err, "agora_role_slots_holder") && attempt < takeNextAttempts:
			continue
		case isUniqueViolation(err, "agora_role_slots_holder"):
			return slots.Job{}, slots.ErrSlotHeld
		}
		return job, err
	}
}
