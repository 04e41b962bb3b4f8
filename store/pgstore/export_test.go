package pgstore

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// JobQueueQuery is one job-queue query with sample arguments.
type JobQueueQuery struct {
	Name string
	SQL  string
	Args []any
	// Agent says the query skips the claims an agent holds.
	Agent bool
	// InOrder says an index serves the pick in its order (oldest first,
	// filtered by nothing, the role, or the role and domain), so the plan
	// should read it in order and stop at the LIMIT.
	InOrder bool
}

// JobQueueQueriesForTest returns every job-queue query, next-and-take's
// included, for plan checks.
func JobQueueQueriesForTest() []JobQueueQuery {
	var out []JobQueueQuery
	for k, q := range takeNextQueries {
		args := append(sampleArgs(k), "key_agent", "Agent", "", int64(1), int64(0))
		out = append(out, JobQueueQuery{Name: "take+" + nameOf(k), SQL: q, Args: args, Agent: true, InOrder: inOrder(k)})
	}
	for k, q := range takeManyQueries {
		args := append(sampleArgs(k), pq.Array([]string{"key_a", "key_b"}), pq.Array([]string{"A", "B"}),
			pq.Array([]string{"", ""}), pq.Array([]int64{1, 1}), pq.Array([]int64{0, 0}))
		out = append(out, JobQueueQuery{Name: "take-many+" + nameOf(k), SQL: q, Args: args, InOrder: inOrder(k)})
	}
	for k, q := range finishTakeQueries {
		args := append(sampleArgs(k), "key_agent", "Agent", "", int64(1), int64(0), "slot_x", "claim_x", int64(1), int64(10))
		out = append(out, JobQueueQuery{Name: "finish-take+" + nameOf(k), SQL: q, Args: args, Agent: true, InOrder: inOrder(k)})
	}
	// A batch as large as a busy Service writes: the plan of a batch of
	// two may probe where one of 64 would scan.
	const batch = 64
	strs := func(prefix string) any {
		v := make([]string, batch)
		for i := range v {
			v[i] = fmt.Sprintf("%s%d", prefix, i)
		}
		return pq.Array(v)
	}
	ints := pq.Array(make([]int64, batch))
	for k, q := range finishTakeManyQueries {
		args := append(sampleArgs(k), strs("slot_"), strs("claim_"), strs("key_"), ints, ints, strs("A"), strs(""), ints, ints)
		out = append(out, JobQueueQuery{Name: "finish-take-many+" + nameOf(k), SQL: q, Args: args, InOrder: inOrder(k)})
	}
	for k, q := range nextSlotQueries {
		args := sampleArgs(k)
		if !k.random {
			args = append(args, 3) // slots to pass over
		}
		out = append(out, JobQueueQuery{Name: nameOf(k), SQL: q, Args: args, Agent: k.agent, InOrder: inOrder(k)})
	}
	return out
}

// inOrder reports whether an index of open slots lists k's candidates in
// the pick's order: oldest first, with no domain filter or with the role's
// too (agora_role_slots_q_domain is ordered by role before id).
func inOrder(k nextSlotKey) bool { return !k.random && (!k.domain || k.role) }

func sampleArgs(k nextSlotKey) []any {
	var args []any
	if k.role {
		args = append(args, "critic")
	}
	if k.domain {
		args = append(args, "law")
	}
	if k.agent {
		args = append(args, "key_agent")
	}
	if k.random {
		args = append(args, 0.5, 0.25)
	}
	if k.spread {
		args = append(args, 40) // slots other takes are taking
	}
	return args
}

func nameOf(k nextSlotKey) string {
	n := "oldest"
	if k.random {
		n = "random"
	}
	if k.role {
		n += "+role"
	}
	if k.domain {
		n += "+domain"
	}
	if k.agent {
		n += "+agent"
	}
	if k.spread {
		n += "+spread"
	}
	return n
}

// ListSlotsQueryForTest is ListSlots' query, for plan checks.
const ListSlotsQueryForTest = listSlotsQuery

// MigrateUpToForTest applies the migrations numbered up to version, as a
// database of an older release has them, so a test can store data in that
// schema and check the later migrations carry it over.
func MigrateUpToForTest(ctx context.Context, db *sqlx.DB, version int) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	for _, m := range ms {
		if m.version > version {
			break
		}
		if err := apply(ctx, db, m); err != nil {
			return err
		}
	}
	return nil
}

// DecodeComments is decodeComments, for its tests.
var DecodeComments = decodeComments

// ReadComments and UnmarshalComments are decodeComments's two readers, for
// FuzzDecodeComments.
var (
	ReadComments      = readComments
	UnmarshalComments = unmarshalComments
)

// SetPruneEvery sets how often l prunes its table, for tests.
func (l *Limiter) SetPruneEvery(n uint64) { l.pruneEvery = n }
