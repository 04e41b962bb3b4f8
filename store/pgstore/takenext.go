package pgstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"

	"github.com/lib/pq"

	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// queued is the condition of a slot in the job queue, written exactly as
// the predicate of its partial indexes (migrations 030 and 031) so that
// they match it: as function calls rather than `q.is_open AND q.ready`,
// which the planner would estimate from the table's statistics. Taken while
// the queue was empty or all done (as autovacuum often takes them), those
// made it expect a row or two and pick by a bitmap scan of every open slot
// and a sort; a function call is estimated at a fixed share of the table,
// so the pick reads its index in order and stops at its LIMIT however
// stale the statistics are. is_open (status = 'open', written beside it,
// see takenColumns) rather than status itself, so that a finish changes no
// column an index reads.
const queued = `booleq(q.is_open, true) AND booleq(q.ready, true)`

// jobPick is the job queue's pick for one filter combination, and how many
// parameters it uses (see nextSlotQuery for their order); a locking oldest
// pick returns up to limit slots (an SQL expression), others one. With lock it
// locks the slot it returns, FOR UPDATE SKIP LOCKED: a slot another
// statement is taking at that moment is passed over for the next eligible
// one, and a slot changed since the statement's snapshot is checked again
// against the filters (no longer open: passed over).
func jobPick(k nextSlotKey, lock bool, limit string) (string, int) {
	where := queued
	n := 0
	param := func() string { n++; return fmt.Sprintf("$%d", n) }
	if k.role {
		where += ` AND q.role = ` + param()
	}
	if k.domain {
		where += ` AND q.domain = ` + param()
	}
	queue := where // the filters' queue, for everyone
	if k.agent {
		where += ` AND NOT EXISTS (SELECT 1 FROM agora_role_slots h WHERE h.claim_id = q.claim_id AND h.api_key_id = ` + param() + ` OFFSET 0)`
	}
	// A locked pick answers the slot's ID and claim alone: the take that
	// follows rewrites the row and returns it. Fewer columns through a
	// plan's nodes are less for PostgreSQL to set up on every run.
	oldest := `SELECT q.id, q.claim_id FROM agora_role_slots q WHERE ` + where + ` ORDER BY q.id LIMIT ` + limit
	if !k.random {
		if lock && k.spread {
			// Spread (the next parameter, TakeNextParams' Skip): the pick
			// starts at the (Skip+1)-th eligible slot, past those the
			// statements in flight are taking, which it would otherwise
			// try to lock one by one, and re-check once they commit. The
			// older ones come second, when too few past them are free.
			// Where the pick starts is counted in the filters' queue, not
			// the agent's: the others take for other agents, and a claim
			// check per slot counted would cost more than the count. The
			// inner q shadows the outer one: past is one lookup, made
			// once in the CTE start that both halves read (written into
			// each half, it would walk the head of the queue twice).
			start := `WITH start AS (SELECT COALESCE((SELECT q.id FROM agora_role_slots q WHERE ` + queue + ` ORDER BY q.id OFFSET ` + param() + `::int LIMIT 1), '') AS id) `
			const past = `(SELECT id FROM start)`
			return start + `SELECT * FROM (SELECT q.id, q.claim_id FROM agora_role_slots q WHERE ` + where + ` AND q.id >= ` + past +
				` ORDER BY q.id LIMIT ` + limit + ` FOR UPDATE SKIP LOCKED) past
				UNION ALL
				SELECT * FROM (SELECT q.id, q.claim_id FROM agora_role_slots q WHERE ` + where + ` AND q.id < ` + past +
				` ORDER BY q.id LIMIT ` + limit + ` FOR UPDATE SKIP LOCKED) older
				LIMIT ` + limit, n
		}
		if lock {
			return oldest + ` FOR UPDATE SKIP LOCKED`, n
		}
		// Unlocked, the oldest pick passes over the first Skip eligible
		// slots (the last parameter), walking at most Skip+1 of them.
		skip := param()
		return `SELECT x.* FROM (SELECT q.* FROM agora_role_slots q WHERE ` + where + ` ORDER BY q.id LIMIT ` + skip + `::int + 1) x
			ORDER BY x.id DESC LIMIT 1`, n
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
		a AS (SELECT q.id, q.claim_id FROM agora_role_slots q JOIN o ON o.id = q.id WHERE %[1]s
			ORDER BY (o.i + o.n - floor(%[2]s::float8 * o.n)::bigint) %% o.n LIMIT 1 FOR UPDATE OF q SKIP LOCKED),
		b AS (%[3]s FOR UPDATE SKIP LOCKED)
		SELECT * FROM a UNION ALL SELECT * FROM b LIMIT 1`, where, at, oldest), n
}

// jobSelect turns the slot s into a job: the slot, its claim and the
// claim's comments, in one row.
const jobSelect = `
		SELECT ` + jobColumns + ` FROM s JOIN agora_claims c ON c.id = s.claim_id`

// takeRow is a row of takeManyQuery: a job of kind 't' for item ord, or
// the count of candidates (candidatesColumns) of kind 'l'.
type takeRow struct {
	Kind string `db:"kind"`
	Ord  int64  `db:"ord"`
	jobRow
}

// columns implements scanned.
func (*takeRow) columns() []string { return takeRowColumns }

// fields implements scanned.
func (r *takeRow) fields() []any { return append([]any{&r.Kind, &r.Ord}, r.jobRow.fields()...) }

// jobColumns are jobSelect's columns, which jobRow reads.
const jobColumns = `s.id, s.claim_id, s.role, s.status, COALESCE(s.api_key_id, '') AS api_key_id, s.agent_name,
			s.agent_avatar_url, s.taken_at, s.done_at, s.created_at, s.lease_expires_at,
			c.title, c.body, c.domain, c.created_at AS claim_created_at, c.sources, c.comments, c.protocol,
			c.author_id, c.author_name, GREATEST(c.updated_at, c.created_at) AS claim_updated_at, c.comment_count`

// jobRow is a row of jobColumns.
type jobRow struct {
	slotRow
	Title          string `db:"title"`
	Body           string `db:"body"`
	Domain         string `db:"domain"`
	ClaimCreatedAt int64  `db:"claim_created_at"`
	Sources        []byte `db:"sources"`
	Comments       []byte `db:"comments"`
	Protocol       string `db:"protocol"`
	AuthorID       string `db:"author_id"`
	AuthorName     string `db:"author_name"`
	ClaimUpdatedAt int64  `db:"claim_updated_at"`
	CommentCount   int    `db:"comment_count"`
}

// columns implements scanned.
func (*jobRow) columns() []string { return jobRowColumns }

// fields implements scanned.
func (r *jobRow) fields() []any {
	return append(r.slotRow.fields(), &r.Title, &r.Body, &r.Domain, &r.ClaimCreatedAt, &r.Sources, &r.Comments, &r.Protocol, &r.AuthorID, &r.AuthorName, &r.ClaimUpdatedAt, &r.CommentCount)
}

func (r jobRow) job() (slots.Job, error) {
	comments, err := decodeComments(r.Comments)
	if err != nil {
		return slots.Job{}, err
	}
	claim, err := claimRow{ID: r.ClaimID, Title: r.Title, Body: r.Body, Domain: r.Domain, CreatedAt: r.ClaimCreatedAt, Sources: r.Sources,
		Protocol: r.Protocol, AuthorID: r.AuthorID, AuthorName: r.AuthorName, CommentCount: r.CommentCount, UpdatedAt: r.ClaimUpdatedAt}.claim()
	if err != nil {
		return slots.Job{}, err
	}
	return slots.Job{Slot: r.slot(), Claim: claim, Comments: comments}, nil
}

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
	stmt, err := s.prepared(ctx, query)
	if err != nil {
		return slots.Job{}, err
	}
	rows, err := selectRows[jobRow](ctx, stmt, 1, args...)
	if err != nil {
		return slots.Job{}, interpretError(ctx, err)
	}
	if len(rows) == 0 {
		return slots.Job{}, sql.ErrNoRows
	}
	return rows[0].job()
}

// takeNextSteps are the CTEs p and s of a take-next: p picks as jobPick
// with a lock and s takes the slot, returning it (with ord 1); gate, when
// not empty, is a condition the take also needs. After the pick's
// parameters come the key ID, agent name, avatar URL, now and lease expiry;
// n is the number of parameters it uses.
func takeNextSteps(k nextSlotKey, gate string) (string, int) {
	pick, n := jobPick(k, true, "1")
	if gate != "" {
		gate = " AND " + gate
	}
	return fmt.Sprintf(`p AS (%s),
		s AS (UPDATE agora_role_slots t SET status = 'taken', api_key_id = $%d, agent_name = $%d,
				agent_avatar_url = $%d, taken_at = $%d, lease_expires_at = $%[6]d, %[7]s
			FROM p WHERE t.id = p.id%[8]s RETURNING %[9]s, 1::bigint AS ord)`, pick, n+1, n+2, n+3, n+4, n+5, takenColumns(fmt.Sprintf("$%d", n+5)), gate, slotColumnsOf("t")), n + 5
}

// takeNextQuery picks as jobPick with a lock and takes the slot in the same
// statement (takeNextSteps).
func takeNextQuery(k nextSlotKey) string {
	steps, _ := takeNextSteps(k, "")
	return `WITH ` + steps + jobSelect
}

var takeNextQueries = func() map[nextSlotKey]string {
	m := map[nextSlotKey]string{}
	for k := range nextSlotQueries {
		if k.agent {
			m[k] = takeNextQuery(k)
			if !k.random {
				k.spread = true
				m[k] = takeNextQuery(k)
			}
		}
	}
	return m
}()

// takePick is the key of p's pick among the take queries and its
// parameters (jobPick's order): spread when an oldest-first pick has a
// Skip.
func takePick(p slots.NextSlotParams) (nextSlotKey, []any) {
	k := nextSlotKey{role: p.Role != "", domain: p.Domain != "", agent: true, random: p.Random >= 0}
	args := jobArgs(p)
	if !k.random && p.Skip > 0 {
		k.spread = true
		args = append(args, p.Skip)
	}
	return k, args
}

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
	k, args := takePick(p.Next)
	q := takeNextQueries[k]
	args = append(args, p.Agent.KeyID, p.Agent.Name, p.Agent.AvatarURL, store.Millis(p.Now), store.Millis(p.LeaseUntil))
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

// finishOutcome is a finish's answer from its statement's row: the slot
// when the statement updated it, else why not, as slots.Slot.FinishError
// says of the row the statement read. The row is as of the statement, so
// a slot the statement refused is refused for one of those reasons.
func finishOutcome(r slotRow, updated bool, p slots.FinishParams) (slots.Slot, error) {
	if updated {
		return r.slot(), nil
	}
	if err := r.slot().FinishError(p.KeyID, p.Now); err != nil {
		return slots.Slot{}, err
	}
	return slots.Slot{}, slots.ErrSlotNotTaken
}

// slotColumnsOf is slotColumns of the table aliased a.
func slotColumnsOf(a string) string {
	return fmt.Sprintf(`%[1]s.id, %[1]s.claim_id, %[1]s.role, %[1]s.status, COALESCE(%[1]s.api_key_id, '') AS api_key_id,
		%[1]s.agent_name, %[1]s.agent_avatar_url, %[1]s.taken_at, %[1]s.done_at, %[1]s.created_at, %[1]s.lease_expires_at`, a)
}

// finishSteps are the CTEs ia, lk, upd and credit that finish the slots
// whose IDs, claim IDs, key IDs, times and credits are the array
// parameters $first to $first+4, item k at position k of each: the
// transitions and the ledger credits of every slot in one statement. They
// lock the rows in ID order first, so concurrent batches wait for one
// another instead of deadlocking. upd returns each slot's item position
// (ord) and credit and the slot as done.
//
// Both find the slots through the primary key, by the array of their IDs
// read from a subquery, whose length the planner cannot see: joined to the
// items by an equality, or given the array itself, the planner may scan
// the whole table instead, a sequential scan of every slot per batch,
// whenever its statistics, or a table of a few thousand slots, make that
// look cheaper than a few dozen index probes. And upd reads each slot's
// item from the parameters at the position a JSON object of the IDs gives
// (ia, a binary search), rather than by joining the slots to the items:
// expecting a row or two on each side, the planner joined them by a nested
// loop that scanned the items again for every slot, a cost growing with
// the square of the batch (1.4 ms of a 63-item batch's 4.5 ms). Nothing else unnests
// the items: rows built from the arrays only to be gathered into arrays
// again cost more than reading the parameters themselves.
func finishSteps(first int) string {
	ids := fmt.Sprintf("$%d::text[]", first)
	item := func(k int, typ string) string { return arrayItem(first+k, typ, iaPos) }
	return `
		ia AS MATERIALIZED (SELECT jsonb_object_agg(slot_id, ord) AS pos, ` + ids + ` AS ids FROM unnest(` + ids + `) WITH ORDINALITY AS u(slot_id, ord)),
		lk AS (SELECT s.id FROM agora_role_slots s WHERE s.id = ANY ((SELECT ids FROM ia)::text[]) ORDER BY s.id FOR UPDATE),
		upd AS (
			UPDATE agora_role_slots s SET status = 'done', done_at = ` + item(3, "bigint[]") + `, ` + finishedColumns + `
			WHERE s.id = ANY (ARRAY(SELECT id FROM lk)) AND s.status = 'taken'
				AND s.claim_id = ` + item(1, "text[]") + ` AND s.api_key_id = ` + item(2, "text[]") + `
				AND (s.lease_due IS NULL OR s.lease_due > ` + item(3, "bigint[]") + `)
			RETURNING ` + iaPos + `::bigint AS ord, ` + item(4, "bigint[]") + ` AS credit, ` + slotColumnsOf("s") + `),
		credit AS (
			INSERT INTO agora_ledger (api_key_id, amount, reason, ref, created_at)
			SELECT api_key_id, credit, 'role_slot_done', id, done_at FROM upd)`
}

// iaPos is the position of slot s's item in finishSteps' arrays.
const iaPos = `((SELECT pos FROM ia) ->> s.id)`

// arrayItem is the item at position pos (an SQL expression) of the array
// parameter $param of type typ.
func arrayItem(param int, typ, pos string) string {
	return fmt.Sprintf("($%d::%s)[%s::int]", param, typ, pos)
}

// finishAnswers answers finishSteps per slot finished: its item's ord,
// true, and the slot as done; then the columns extra (empty, or starting
// with a comma). An item not finished has no row: refuseFinishes answers
// it after the statement.
func finishAnswers(extra string) string {
	return `
		SELECT ord, true AS updated, ` + slotColumnsOf("upd") + extra + ` FROM upd`
}

// finishManyQuery is finishQuery for many slots at once (finishSteps). Its
// parameters are arrays of the slot IDs, claim IDs, key IDs, times and
// credits.
var finishManyQuery = `WITH` + finishSteps(1) + finishAnswers("")

// finishRow is a row of finishManyQuery: the slot of item ord, finished.
type finishRow struct {
	Ord     int64 `db:"ord"`
	Updated bool  `db:"updated"`
	slotRow
}

// columns implements scanned.
func (*finishRow) columns() []string { return finishRowColumns }

// fields implements scanned.
func (r *finishRow) fields() []any { return append([]any{&r.Ord, &r.Updated}, r.slotRow.fields()...) }

// FinishSlots implements slots.SlotStore in one statement (finishManyQuery).
// A batch of one, or naming a slot twice, is finished item by item
// instead, so that each item's answer is its own.
func (s *Store) FinishSlots(ctx context.Context, ps []slots.FinishParams) ([]slots.FinishResult, error) {
	out := make([]slots.FinishResult, len(ps))
	if len(ps) == 1 {
		out[0].Slot, out[0].Err = s.FinishSlot(ctx, ps[0])
		return out, nil
	}
	seen := make(map[string]bool, len(ps))
	var ids, claims, keys []string
	var ats, credits []int64
	for _, p := range ps {
		if seen[p.SlotID] {
			for i, p := range ps {
				out[i].Slot, out[i].Err = s.FinishSlot(ctx, p)
			}
			return out, nil
		}
		seen[p.SlotID] = true
		ids, claims, keys = append(ids, p.SlotID), append(claims, p.ClaimID), append(keys, p.KeyID)
		ats, credits = append(ats, store.Millis(p.Now)), append(credits, p.Credit)
	}
	stmt, err := s.prepared(ctx, finishManyQuery)
	if err != nil {
		return nil, err
	}
	rows, err := selectRows[finishRow](ctx, stmt, len(ps), pq.Array(ids), pq.Array(claims), pq.Array(keys), pq.Array(ats), pq.Array(credits))
	if err != nil {
		return nil, interpretError(ctx, err)
	}
	answered := make([]bool, len(ps))
	for _, r := range rows {
		i := int(r.Ord) - 1
		out[i].Slot, answered[i] = r.slot(), true
	}
	var refused []int
	for i, ok := range answered {
		if !ok {
			refused = append(refused, i)
		}
	}
	err = s.refuseFinishes(ctx, refused, func(i int) slots.FinishParams { return ps[i] },
		func(i int, err error) { out[i].Err = err })
	if err != nil {
		return nil, err
	}
	return out, nil
}

// refuseFinishes answers the items idx (finish gives item i) that a
// batch's statement did not finish (finishAnswers has a row only for the
// slots it finished): refuse gets each one's refusal, as finishOutcome
// says of its slot as read now, or ErrSlotNotFound when its claim has no
// such slot. The batch's statement read them itself before, but PostgreSQL
// set that branch of its plan up on every run, a sixth of a small batch's
// cost, for answers a batch seldom has; now a batch with a refusal pays
// one more query instead.
func (s *Store) refuseFinishes(ctx context.Context, idx []int, finish func(i int) slots.FinishParams, refuse func(i int, err error)) error {
	if len(idx) == 0 {
		return nil
	}
	ids := make([]string, len(idx))
	for k, i := range idx {
		ids[k] = finish(i).SlotID
	}
	stmt, err := s.prepared(ctx, `SELECT `+slotColumns+` FROM agora_role_slots WHERE id = ANY ($1::text[])`)
	if err != nil {
		return err
	}
	rows, err := selectRows[slotRow](ctx, stmt, len(ids), pq.Array(ids))
	if err != nil {
		return interpretError(ctx, err)
	}
	byID := make(map[string]slotRow, len(rows))
	for _, r := range rows {
		byID[r.ID] = r
	}
	for _, i := range idx {
		p := finish(i)
		r, ok := byID[p.SlotID]
		if !ok || r.ClaimID != p.ClaimID {
			refuse(i, slots.ErrSlotNotFound)
			continue
		}
		_, err := finishOutcome(r, false, p)
		refuse(i, err)
	}
	return nil
}

// takeManySteps are the CTEs l, pair and s that take the oldest eligible
// slots with the filters of k (its agent and random flags unset) for the
// agents of the CTE a (columns key_id, name, avatar, at, lease, ord, and
// rn numbering them from 1): they lock up to limit (an SQL expression, at
// least the number of agents) open slots, FOR UPDATE SKIP LOCKED, pair the
// rn-th oldest with the rn-th agent, and take each slot whose claim its
// agent holds nothing of; s returns the slots taken with their agent's ord.
// An agent left without a pair is not in s.
func takeManySteps(k nextSlotKey, limit string) string {
	pick, _ := jobPick(k, true, limit)
	return fmt.Sprintf(`
		l AS (SELECT id, claim_id, row_number() OVER (ORDER BY id) AS rn FROM (%s) p),
		pair AS (SELECT l.id, a.key_id, a.name, a.avatar, a.at, a.lease, a.ord FROM l JOIN a ON a.rn = l.rn
			WHERE NOT EXISTS (SELECT 1 FROM agora_role_slots h WHERE h.claim_id = l.claim_id AND h.api_key_id = a.key_id OFFSET 0)),
		s AS (UPDATE agora_role_slots t SET status = 'taken', api_key_id = pair.key_id, agent_name = pair.name,
				agent_avatar_url = pair.avatar, taken_at = pair.at, lease_expires_at = pair.lease, %s
			FROM pair WHERE t.id = pair.id RETURNING %s, pair.ord)`, pick, takenColumns("pair.lease"), slotColumnsOf("t"))
}

// filterParams counts the pick parameters of k's role and domain filters
// and its spread.
func filterParams(k nextSlotKey) int {
	n := 0
	for _, b := range []bool{k.role, k.domain, k.spread} {
		if b {
			n++
		}
	}
	return n
}

// candidatesColumns and candidatesFiller make the last row of a statement
// built on takeManySteps (kind 'l'): its ord is how many open slots the
// statement locked for its agents (the CTE l), its other columns stand in
// for a job's. noneLeft reads it.
const (
	candidatesColumns = `(SELECT count(*) FROM l)`
	candidatesFiller  = `'', '', '', '', '', '', '', 0, 0, 0, 0, '', '', '', 0, '[]'::jsonb, '[]'::json, '', '', '', 0, 0`
)

// noneLeft reports whether an agent a takeManySteps statement left without
// a slot found none left for it, so that it is answered ErrNoJob at once
// instead of by a TakeNextSlot of its own: when it was numbered (rank)
// past the candidates the statement locked and every one of them was
// taken. Slots another statement was taking are not waited for, as
// TakeNextSlot's SKIP LOCKED does not; a candidate left untaken (its pair's
// agent holds a seat of its claim) may still be this agent's, so it is
// served again. At the end of a queue this saves a statement per agent
// left over: a batch of 32 finding 10 slots ran 22 more, one after another.
func noneLeft(rank, candidates, taken int) bool {
	return rank > candidates && taken == candidates
}

// takeManyQuery takes the oldest eligible slots with the filters of k for
// many agents in one statement (takeManySteps). After the pick's
// parameters come arrays of the key IDs, names, avatar URLs, times and
// lease expiries. Its rows are the jobs taken (kind 't') and the
// candidates' count (kind 'l').
func takeManyQuery(k nextSlotKey) string {
	n := filterParams(k)
	return fmt.Sprintf(`WITH a AS (SELECT *, ord AS rn FROM unnest($%d::text[], $%d::text[], $%d::text[], $%d::bigint[], $%d::bigint[])
				WITH ORDINALITY AS a(key_id, name, avatar, at, lease, ord)),`, n+1, n+2, n+3, n+4, n+5) +
		takeManySteps(k, fmt.Sprintf("cardinality($%d::text[])", n+1)) + `
		SELECT 't' AS kind, s.ord, ` + jobColumns + ` FROM s JOIN agora_claims c ON c.id = s.claim_id
		UNION ALL
		SELECT 'l', ` + candidatesColumns + `, ` + candidatesFiller
}

var takeManyQueries = func() map[nextSlotKey]string {
	m := map[nextSlotKey]string{}
	for _, role := range []bool{false, true} {
		for _, domain := range []bool{false, true} {
			for _, spread := range []bool{false, true} {
				k := nextSlotKey{role: role, domain: domain, spread: spread}
				m[k] = takeManyQuery(k)
			}
		}
	}
	return m
}()

// TakeNextSlots implements slots.SlotStore: the agents asking for the
// oldest slot with the same filters are served by one statement
// (takeManyQuery); an agent it left without a slot while one may be left
// for it (noneLeft: its pair was on a claim it holds), a random pick, or a
// group the statement refused (a seat the agent took elsewhere meanwhile,
// or a concurrent batch of the same agents deadlocking on their seats) is
// served by TakeNextSlot.
func (s *Store) TakeNextSlots(ctx context.Context, ps []slots.TakeNextParams) ([]slots.JobResult, error) {
	out := make([]slots.JobResult, len(ps))
	served := make([]bool, len(ps))
	groups := oldestGroups(len(ps), func(i int) slots.NextSlotParams { return ps[i].Next })
	for f, g := range groups {
		idx := g.idx
		if len(idx) < 2 {
			continue
		}
		args, key := f.args(g)
		n := len(idx)
		keys, names, avatars := make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
		ats, leases := make([]int64, 0, n), make([]int64, 0, n)
		for _, i := range idx {
			p := ps[i]
			keys, names, avatars = append(keys, p.Agent.KeyID), append(names, p.Agent.Name), append(avatars, p.Agent.AvatarURL)
			ats, leases = append(ats, store.Millis(p.Now)), append(leases, store.Millis(p.LeaseUntil))
		}
		args = append(args, pq.Array(keys), pq.Array(names), pq.Array(avatars), pq.Array(ats), pq.Array(leases))
		stmt, err := s.prepared(ctx, takeManyQueries[key])
		if err != nil {
			return nil, err
		}
		rows, err := selectRows[takeRow](ctx, stmt, len(idx)+1, args...)
		if isUniqueViolation(err, "agora_role_slots_holder") || isDeadlock(err) {
			continue // served one by one below
		}
		if err != nil {
			return nil, interpretError(ctx, err)
		}
		candidates, taken := -1, 0
		for _, r := range rows {
			if r.Kind == "l" {
				candidates = int(r.Ord)
				continue
			}
			i := idx[r.Ord-1]
			out[i].Job, out[i].Err = r.job()
			served[i] = true
			taken++
		}
		for rank, i := range idx {
			if !served[i] && noneLeft(rank+1, candidates, taken) {
				out[i].Err, served[i] = slots.ErrNoJob, true
			}
		}
	}
	for i, p := range ps {
		if !served[i] {
			out[i].Job, out[i].Err = s.TakeNextSlot(ctx, p)
			if out[i].Err != nil && !errors.Is(out[i].Err, slots.ErrNoJob) && !errors.Is(out[i].Err, slots.ErrSlotHeld) {
				return nil, out[i].Err
			}
		}
	}
	return out, nil
}

// isDeadlock reports PostgreSQL's deadlock_detected: two statements waited
// on each other and this one was cancelled, changing nothing.
func isDeadlock(err error) bool {
	var pe *pq.Error
	return errors.As(err, &pe) && pe.Code == "40P01"
}

// oldestFilter is the filters of a group of oldest-first picks, which one
// statement serves together.
type oldestFilter struct {
	role   slots.Role
	domain string
}

// oldestGroups groups the items 0 … n-1 whose pick (next) is oldest-first
// by their filters.
func oldestGroups(n int, next func(i int) slots.NextSlotParams) map[oldestFilter]*oldestGroup {
	groups := map[oldestFilter]*oldestGroup{}
	for i := range n {
		p := next(i)
		if p.Random >= 0 {
			continue
		}
		f := oldestFilter{p.Role, p.Domain}
		g := groups[f]
		if g == nil {
			g = &oldestGroup{skip: p.Skip}
			groups[f] = g
		}
		g.idx, g.skip = append(g.idx, i), min(g.skip, p.Skip)
	}
	return groups
}

// oldestGroup is the items of a group and the least Skip among them, which
// spreads its statement's pick.
type oldestGroup struct {
	idx  []int
	skip int
}

// args are the pick parameters of a group with filters f and skip g.skip,
// in jobPick's order, and the key of its statement.
func (f oldestFilter) args(g *oldestGroup) ([]any, nextSlotKey) {
	var args []any
	k := nextSlotKey{role: f.role != "", domain: f.domain != "", spread: g.skip > 0}
	if k.role {
		args = append(args, string(f.role))
	}
	if k.domain {
		args = append(args, f.domain)
	}
	if k.spread {
		args = append(args, g.skip)
	}
	return args, k
}
