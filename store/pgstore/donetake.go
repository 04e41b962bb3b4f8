package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/lib/pq"

	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// finishTakeColumns are the columns of a finish's row in a finish-and-take
// answer: a finish carries no claim, so they stand in for jobColumns' claim.
const finishTakeColumns = `, '' AS title, '' AS body, '' AS domain, 0::bigint AS claim_created_at, '[]'::jsonb AS sources, '[]'::json AS comments, '' AS protocol,
	'' AS author_id, '' AS author_name, 0::bigint AS claim_updated_at, 0 AS comment_count`

// finishTakeAnswers answers a finish-and-take statement: per item a row of
// kind 'f' for its finish (finishAnswers) and, when it took a slot, one of
// kind 't' with the job (s joined with its claim).
var finishTakeAnswers = `
		SELECT 'f' AS kind, f.* FROM (` + finishAnswers(finishTakeColumns) + `) f
		UNION ALL
		SELECT 't', s.ord, true, ` + jobColumns + ` FROM s JOIN agora_claims c ON c.id = s.claim_id`

// finishTakeQuery finishes one slot and takes its agent's next as
// TakeNextSlot does, in one statement: finishOneSteps, then takeNextSteps
// gated on the finish having succeeded. Its parameters are takeNextSteps'
// (the agent's key ID is the finish's too), then the slot ID, claim ID,
// time and credit of the finish. A statement of one item leaves out the
// batch's arrays and locking order: PostgreSQL sets up every node of a
// plan on each run, which is most of a lone seat's cost.
func finishTakeQuery(k nextSlotKey) string {
	steps, n := takeNextSteps(k, "EXISTS (SELECT 1 FROM upd)")
	slot, claim := fmt.Sprintf("$%d", n+1), fmt.Sprintf("$%d", n+2)
	return `WITH ` + finishOneSteps(slot, claim, fmt.Sprintf("$%d", n-4), fmt.Sprintf("$%d::bigint", n+3), fmt.Sprintf("$%d::bigint", n+4)) + `, ` + steps + `
		SELECT 'f' AS kind, 1::bigint AS ord, f.* FROM (` + finishOneAnswer(slot, claim, finishTakeColumns) + `) f
		UNION ALL
		SELECT 't', s.ord, true, ` + jobColumns + ` FROM s JOIN agora_claims c ON c.id = s.claim_id`
}

var finishTakeQueries = func() map[nextSlotKey]string {
	m := map[nextSlotKey]string{}
	for k := range takeNextQueries {
		m[k] = finishTakeQuery(k)
	}
	return m
}()

// finishTakeManyQuery finishes many agents' slots and takes each agent
// whose finish succeeded the next oldest eligible slot with the filters of
// k, in one statement: finishSteps, then takeManySteps for those agents.
// After the pick's parameters come arrays of the slot IDs, claim IDs, key
// IDs, finish times, credits, agent names, avatar URLs, take times and
// lease expiries.
func finishTakeManyQuery(k nextSlotKey) string {
	n := filterParams(k)
	item := func(k int, typ string) string { return arrayItem(n+k, typ, "upd.ord") }
	return `WITH` + finishSteps(n+1) + `,
		a AS (SELECT ` + item(3, "text[]") + ` AS key_id, ` + item(6, "text[]") + ` AS name, ` + item(7, "text[]") + ` AS avatar,
				` + item(8, "bigint[]") + ` AS at, ` + item(9, "bigint[]") + ` AS lease, upd.ord, row_number() OVER (ORDER BY upd.ord) AS rn
			FROM upd),` +
		takeManySteps(k, "(SELECT count(*) FROM a)") + finishTakeAnswers + `
		UNION ALL
		SELECT 'l', ` + candidatesColumns + `, false, ` + candidatesFiller
}

var finishTakeManyQueries = func() map[nextSlotKey]string {
	m := map[nextSlotKey]string{}
	for k := range takeManyQueries {
		m[k] = finishTakeManyQuery(k)
	}
	return m
}()

// finishTakeRow is a row of finishTakeAnswers.
type finishTakeRow struct {
	Kind    string `db:"kind"`
	Ord     int64  `db:"ord"`
	Updated bool   `db:"updated"`
	jobRow
}

// columns implements scanned.
func (*finishTakeRow) columns() []string { return finishTakeRowColumns }

// fields implements scanned.
func (r *finishTakeRow) fields() []any {
	return append([]any{&r.Kind, &r.Ord, &r.Updated}, r.jobRow.fields()...)
}

// readFinishTake turns the rows of one finish-and-take statement into the
// results of its items ps (out[idx[ord-1]] for ord); taken reports the
// items whose agent was handed a slot, candidates the count its row of
// kind 'l' gives (candidatesColumns; -1 without one).
func readFinishTake(rows []finishTakeRow, ps []slots.FinishTakeParams, idx []int, out []slots.FinishTakeResult) (taken map[int]bool, candidates int, err error) {
	taken, candidates = map[int]bool{}, -1
	for _, i := range idx {
		out[i] = slots.FinishTakeResult{Err: slots.ErrSlotNotFound}
	}
	for _, r := range rows {
		if r.Kind == "l" {
			candidates = int(r.Ord)
			continue
		}
		i := idx[r.Ord-1]
		if r.Kind == "f" {
			out[i].Slot, out[i].Err = finishOutcome(r.slotRow, r.Updated, ps[i].Finish)
			continue
		}
		if out[i].Next, err = r.job(); err != nil {
			return nil, 0, err
		}
		taken[i] = true
	}
	return taken, candidates, nil
}

// finishTake serves item i of ps with finishTakeQuery, again (as
// TakeNextSlot) when the agent's concurrent take seated it on the picked
// claim first; after takeNextAttempts it finishes alone and the take
// answers ErrSlotHeld.
func (s *Store) finishTake(ctx context.Context, ps []slots.FinishTakeParams, i int, out []slots.FinishTakeResult) error {
	p := ps[i]
	p.Next.Next.AgentKeyID = p.Next.Agent.KeyID
	n := p.Next
	k, args := takePick(n.Next)
	q := finishTakeQueries[k]
	args = append(args, n.Agent.KeyID, n.Agent.Name, n.Agent.AvatarURL, store.Millis(n.Now), store.Millis(n.LeaseUntil),
		p.Finish.SlotID, p.Finish.ClaimID, store.Millis(p.Finish.Now), p.Finish.Credit)
	stmt, err := s.prepared(ctx, q)
	if err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		rows, err := selectRows[finishTakeRow](ctx, stmt, 2, args...)
		switch {
		case (isUniqueViolation(err, "agora_role_slots_holder") || isDeadlock(err)) && attempt < takeNextAttempts:
			continue
		case isUniqueViolation(err, "agora_role_slots_holder"):
			out[i].Slot, out[i].Err = s.FinishSlot(ctx, p.Finish)
			out[i].NextErr = slots.ErrSlotHeld
			return nil
		case err != nil:
			return interpretError(ctx, err)
		}
		taken, _, err := readFinishTake(rows, ps, []int{i}, out)
		if err != nil {
			return err
		}
		if out[i].Err == nil && !taken[i] {
			out[i].NextErr = slots.ErrNoJob
		}
		return nil
	}
}

// FinishAndTakeNextSlots implements slots.SlotStore. The items asking for
// the oldest slot with the same filters are served by one statement per
// filter (finishTakeManyQuery); the others, a batch naming a slot twice,
// and a group its statement refused (a seat an agent took elsewhere
// meanwhile, or a deadlock with a concurrent batch; the statement changed
// nothing) by one statement each (finishTakeQuery). An agent whose finish
// succeeded but whom its group's statement left without a pair is served by
// TakeNextSlot after it, unless there was none left for it (noneLeft).
func (s *Store) FinishAndTakeNextSlots(ctx context.Context, ps []slots.FinishTakeParams) ([]slots.FinishTakeResult, error) {
	out := make([]slots.FinishTakeResult, len(ps))
	served := make([]bool, len(ps))
	seen := make(map[string]bool, len(ps))
	twice := false
	for _, p := range ps {
		twice = twice || seen[p.Finish.SlotID]
		seen[p.Finish.SlotID] = true
	}
	groups := oldestGroups(len(ps), func(i int) slots.NextSlotParams { return ps[i].Next.Next })
	for f, g := range groups {
		idx := g.idx
		if len(idx) < 2 || twice {
			continue
		}
		args, key := f.args(g)
		n := len(idx)
		ids, claims, keys, names, avatars := make([]string, 0, n), make([]string, 0, n), make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
		ats, credits, takeAts, leases := make([]int64, 0, n), make([]int64, 0, n), make([]int64, 0, n), make([]int64, 0, n)
		for _, i := range idx {
			fp, np := ps[i].Finish, ps[i].Next
			ids, claims, keys = append(ids, fp.SlotID), append(claims, fp.ClaimID), append(keys, fp.KeyID)
			ats, credits = append(ats, store.Millis(fp.Now)), append(credits, fp.Credit)
			names, avatars = append(names, np.Agent.Name), append(avatars, np.Agent.AvatarURL)
			takeAts, leases = append(takeAts, store.Millis(np.Now)), append(leases, store.Millis(np.LeaseUntil))
		}
		args = append(args, pq.Array(ids), pq.Array(claims), pq.Array(keys), pq.Array(ats), pq.Array(credits),
			pq.Array(names), pq.Array(avatars), pq.Array(takeAts), pq.Array(leases))
		stmt, err := s.prepared(ctx, finishTakeManyQueries[key])
		if err != nil {
			return nil, err
		}
		rows, err := selectRows[finishTakeRow](ctx, stmt, 2*len(idx)+1, args...)
		if isUniqueViolation(err, "agora_role_slots_holder") || isDeadlock(err) {
			continue // served one by one below
		}
		if err != nil {
			return nil, interpretError(ctx, err)
		}
		taken, candidates, err := readFinishTake(rows, ps, idx, out)
		if err != nil {
			return nil, err
		}
		// readFinishTake answered ErrSlotNotFound for the items the
		// statement did not finish.
		var refused []int
		for _, i := range idx {
			if out[i].Err != nil {
				refused = append(refused, i)
			}
		}
		err = s.refuseFinishes(ctx, refused, func(i int) slots.FinishParams { return ps[i].Finish },
			func(i int, err error) { out[i].Err = err })
		if err != nil {
			return nil, err
		}
		rank := 0 // the agent's number among those finished, as the statement's a
		for _, i := range idx {
			served[i] = true
			if out[i].Err != nil {
				continue
			}
			rank++
			switch {
			case taken[i]:
			case noneLeft(rank, candidates, len(taken)):
				out[i].NextErr = slots.ErrNoJob
			default:
				out[i].Next, out[i].NextErr = s.TakeNextSlot(ctx, ps[i].Next)
				if err := out[i].NextErr; err != nil && !errors.Is(err, slots.ErrNoJob) && !errors.Is(err, slots.ErrSlotHeld) {
					return nil, err
				}
			}
		}
	}
	for i := range ps {
		if !served[i] {
			if err := s.finishTake(ctx, ps, i, out); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}
