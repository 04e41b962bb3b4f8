package redisstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// A slot's and a claim's hash are read by HMGET of these fields, in this
// order, and answered so by every script and read of this package (nil
// where a field is absent): no field name travels in a reply, and no script
// searches a reply for one. Redis's time per seat of the job queue is
// mostly its scripts' strings and reply items, so each one counts. Each
// list's position constants index it.
const (
	slotID = iota
	slotClaimID
	slotRole
	slotStatus
	slotAPIKeyID
	slotAgentName
	slotAgentAvatarURL
	slotTakenAt
	slotDoneAt
	slotCreatedAt
	slotLeaseExpiresAt
	slotFieldCount
)

var slotFields = [slotFieldCount]string{
	slotID:             "_id",
	slotClaimID:        "claimId",
	slotRole:           "role",
	slotStatus:         "status",
	slotAPIKeyID:       "apiKeyId",
	slotAgentName:      "agentName",
	slotAgentAvatarURL: "agentAvatarUrl",
	slotTakenAt:        "takenAt",
	slotDoneAt:         "doneAt",
	slotCreatedAt:      "createdAt",
	slotLeaseExpiresAt: "leaseExpiresAt",
}

const (
	claimID = iota
	claimTitle
	claimBody
	claimDomain
	claimCreatedAt
	claimSources
	claimProtocol
	claimAuthorID
	claimAuthorName
	claimFieldCount
)

var claimFields = [claimFieldCount]string{
	claimID:        "_id",
	claimTitle:     "title",
	claimBody:      "body",
	claimDomain:    "domain",
	claimCreatedAt: "createdAt",
	claimSources:   "sources",
	claimProtocol:  "protocol",
	// Fields are only appended: a job text (lib.lua's job_text) says how
	// many it holds, and one written before later fields reads them empty.
	claimAuthorID:   "authorId",
	claimAuthorName: "authorName",
}

// The job queue's scripts answer only what their caller did not send. A
// finish answers doneFields; the rest of the slot as done is the finish's
// own slot and claim IDs, key and time, and status done. A take (and a
// pick) answers the slot's ID and queuedFields, all that an open slot's
// hash holds; the rest of a slot taken is the taker's key, name, avatar,
// time and lease, and status taken.
const (
	doneRole = iota
	doneAgentName
	doneAgentAvatarURL
	doneTakenAt
	doneCreatedAt
	doneLeaseExpiresAt
	doneFieldCount
)

var doneFields = [doneFieldCount]string{
	doneRole:           "role",
	doneAgentName:      "agentName",
	doneAgentAvatarURL: "agentAvatarUrl",
	doneTakenAt:        "takenAt",
	doneCreatedAt:      "createdAt",
	doneLeaseExpiresAt: "leaseExpiresAt",
}

const (
	queuedClaimID = iota
	queuedRole
	queuedCreatedAt
	queuedStatus
	queuedFieldCount
)

var queuedFields = [queuedFieldCount]string{
	queuedClaimID:   "claimId",
	queuedRole:      "role",
	queuedCreatedAt: "createdAt",
	queuedStatus:    "status",
}

// luaFields declares the lists to the scripts, before lib.lua: for each,
// a function returning its names in order (SLOT_FIELDS(), to pass to
// HMGET), its length (SLOT_FIELDS_N) and a local per position (S_claimId;
// C_, D_ and Q_ for the others), so that each order is written once, here,
// and a script builds no table to read it. linkScript keeps those a script
// uses.
func luaFields() string {
	var b strings.Builder
	decl := func(list, prefix string, fields []string) {
		fmt.Fprintf(&b, "local function %s() return ", list)
		for i, f := range fields {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%q", f)
		}
		fmt.Fprintf(&b, " end\n\nlocal %s_N = %d\n\n", list, len(fields))
		for i, f := range fields {
			fmt.Fprintf(&b, "local %s_%s = %d\n\n", prefix, strings.TrimPrefix(f, "_"), i+1)
		}
	}
	decl("SLOT_FIELDS", "S", slotFields[:])
	decl("CLAIM_FIELDS", "C", claimFields[:])
	decl("DONE_FIELDS", "D", doneFields[:])
	decl("QUEUED_FIELDS", "Q", queuedFields[:])
	fmt.Fprintf(&b, "-- How many comments a job carries (slots.JobComments).\nlocal JOB_COMMENTS = %d\n\n", slots.JobComments)
	return b.String()
}

// values reads a reply of n fields in a list's order: each a string, or
// nil where the hash has no such field ("" then).
func values(v any, n int, what string) ([]string, error) {
	a, ok := v.([]any)
	if !ok || len(a) != n {
		return nil, fmt.Errorf("redisstore: unexpected %s reply %T of %d items", what, v, len(a))
	}
	out := make([]string, n)
	for i, x := range a {
		switch x := x.(type) {
		case string:
			out[i] = x
		case nil:
		default:
			return nil, fmt.Errorf("redisstore: unexpected %s field %T", what, x)
		}
	}
	return out, nil
}

// millis parses a stored time, Unix milliseconds (store.FromMillis); an
// absent one is the zero time.
func millis(v, field, id string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("redisstore: field %s of %s: %w", field, id, err)
	}
	return store.FromMillis(n), nil
}

// times parses the stored times f[i] of record id into the pointers at[i];
// fields names them in an error.
func times(f, fields []string, id string, at map[int]*time.Time) error {
	for i, p := range at {
		t, err := millis(f[i], fields[i], id)
		if err != nil {
			return err
		}
		*p = t
	}
	return nil
}

// decodeSlot reads a slot as slotFields lists it.
func decodeSlot(v any) (slots.Slot, error) {
	f, err := values(v, slotFieldCount, "slot")
	if err != nil {
		return slots.Slot{}, err
	}
	sl := slots.Slot{
		ID:             f[slotID],
		ClaimID:        f[slotClaimID],
		Role:           slots.Role(f[slotRole]),
		Status:         slots.Status(f[slotStatus]),
		APIKeyID:       f[slotAPIKeyID],
		AgentName:      f[slotAgentName],
		AgentAvatarURL: f[slotAgentAvatarURL],
	}
	err = times(f, slotFields[:], sl.ID, map[int]*time.Time{
		slotTakenAt: &sl.TakenAt, slotDoneAt: &sl.DoneAt, slotCreatedAt: &sl.CreatedAt, slotLeaseExpiresAt: &sl.LeaseExpiresAt})
	return sl, err
}

// decodeDone reads a finish's answer, doneFields, for the finish p.
func decodeDone(p slots.FinishParams, v any) (slots.Slot, error) {
	f, err := values(v, doneFieldCount, "finish")
	if err != nil {
		return slots.Slot{}, err
	}
	sl := slots.Slot{
		ID:             p.SlotID,
		ClaimID:        p.ClaimID,
		Role:           slots.Role(f[doneRole]),
		Status:         slots.StatusDone,
		APIKeyID:       p.KeyID,
		AgentName:      f[doneAgentName],
		AgentAvatarURL: f[doneAgentAvatarURL],
		DoneAt:         store.Milli(p.Now),
	}
	err = times(f, doneFields[:], sl.ID, map[int]*time.Time{
		doneTakenAt: &sl.TakenAt, doneCreatedAt: &sl.CreatedAt, doneLeaseExpiresAt: &sl.LeaseExpiresAt})
	return sl, err
}

// decodeQueued reads a taken or picked slot's answer, its ID and
// queuedFields: taken by take (nil: still open, as a pick answers it).
func decodeQueued(id string, take *slots.TakeNextParams, v any) (slots.Slot, error) {
	f, err := values(v, queuedFieldCount, "slot")
	if err != nil {
		return slots.Slot{}, err
	}
	sl := slots.Slot{ID: id, ClaimID: f[queuedClaimID], Role: slots.Role(f[queuedRole]), Status: slots.Status(f[queuedStatus])}
	if err := times(f, queuedFields[:], id, map[int]*time.Time{queuedCreatedAt: &sl.CreatedAt}); err != nil {
		return slots.Slot{}, err
	}
	if take != nil {
		sl.Status, sl.APIKeyID, sl.AgentName, sl.AgentAvatarURL = slots.StatusTaken, take.Agent.KeyID, take.Agent.Name, take.Agent.AvatarURL
		sl.TakenAt, sl.LeaseExpiresAt = store.Milli(take.Now), store.Milli(take.LeaseUntil)
	}
	return sl, nil
}

// decodeClaim reads a claim as claimFields lists it; one stored before
// claims had sources has no sources field, and none.
func decodeClaim(v any) (slots.Claim, error) {
	f, err := values(v, claimFieldCount, "claim")
	if err != nil {
		return slots.Claim{}, err
	}
	c := slots.Claim{ID: f[claimID], Title: f[claimTitle], Body: f[claimBody], Domain: f[claimDomain], Sources: []slots.Source{},
		Protocol: f[claimProtocol], AuthorID: f[claimAuthorID], AuthorName: f[claimAuthorName]}
	if raw := f[claimSources]; raw != "" && raw != "[]" { // most claims have none
		if err := json.Unmarshal([]byte(raw), &c.Sources); err != nil {
			return c, fmt.Errorf("redisstore: sources of %s: %w", c.ID, err)
		}
	}
	return c, times(f, claimFields[:], c.ID, map[int]*time.Time{claimCreatedAt: &c.CreatedAt})
}

// decodeCountedClaim reads a claim as lib.lua's counted_claim answers it:
// claimFields, then its comment count.
func decodeCountedClaim(v any) (slots.Claim, error) {
	a, ok := v.([]any)
	if !ok || len(a) != claimFieldCount+2 {
		return slots.Claim{}, fmt.Errorf("redisstore: claim reply %T of %d items, want %d", v, len(a), claimFieldCount+2)
	}
	c, err := decodeClaim(a[:claimFieldCount])
	if err != nil {
		return c, err
	}
	n, ok := a[claimFieldCount].(int64)
	if !ok {
		return c, fmt.Errorf("redisstore: comment count of %s is %T, not an integer", c.ID, a[claimFieldCount])
	}
	c.CommentCount = int(n)
	updated, _ := a[claimFieldCount+1].(string)
	return c, setUpdated(&c, updated)
}

// setUpdated reads a claim's updatedAt field, Unix milliseconds; a claim
// stored before it had one ("") was last updated when it was created.
func setUpdated(c *slots.Claim, raw string) error {
	if raw == "" {
		c.UpdatedAt = c.CreatedAt
		return nil
	}
	ms, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		return fmt.Errorf("redisstore: updatedAt of %s: %w", c.ID, err)
	}
	c.UpdatedAt = store.FromMillis(ms)
	return nil
}

// reply reads a script's flat reply in order: push_job's jobs, and the
// items of finish_many.lua, take_next_many.lua and
// finish_take_next_many.lua. The first fault sticks: every later read
// answers zero values and err reports it.
type reply struct {
	a   []any
	i   int
	err error
}

// take returns the next n items.
func (r *reply) take(n int) []any {
	if r.err == nil && (n < 0 || r.i+n > len(r.a)) {
		r.err = fmt.Errorf("redisstore: script reply of %d items ends at %d, %d more wanted", len(r.a), r.i, n)
	}
	if r.err != nil {
		return nil
	}
	v := r.a[r.i : r.i+n]
	r.i += n
	return v
}

// done reports whether every item has been read.
func (r *reply) done() bool { return r.err != nil || r.i >= len(r.a) }

// str reads a string item.
func (r *reply) str() string {
	v := r.take(1)
	if r.err != nil {
		return ""
	}
	s, ok := v[0].(string)
	if !ok {
		r.err = fmt.Errorf("redisstore: script reply item %d is %T, not a string", r.i-1, v[0])
	}
	return s
}

// int reads an integer item.
func (r *reply) int() int {
	v := r.take(1)
	if r.err != nil {
		return 0
	}
	n, ok := v[0].(int64)
	if !ok {
		r.err = fmt.Errorf("redisstore: script reply item %d is %T, not an integer", r.i-1, v[0])
	}
	return int(n)
}

// job reads a job as push_job writes it, taken by take (nil: a pick's).
func (r *reply) job(take *slots.TakeNextParams) slots.Job {
	id := r.str()
	v := r.take(queuedFieldCount)
	if r.err != nil {
		return slots.Job{}
	}
	sl, err := decodeQueued(id, take, v)
	if err != nil {
		r.err = err
		return slots.Job{}
	}
	text, updated, count := r.str(), r.str(), r.str()
	if r.err != nil {
		return slots.Job{}
	}
	n, err := strconv.Atoi(count)
	if err != nil {
		r.err = fmt.Errorf("redisstore: job: comment count %q", count)
		return slots.Job{}
	}
	claim, comments, err := jobText(text)
	if err != nil {
		r.err = err
		return slots.Job{}
	}
	c, err := decodeClaim(claim)
	if err == nil {
		err = setUpdated(&c, updated)
	}
	if err != nil {
		r.err = err
		return slots.Job{}
	}
	cs, err := decodeComments(comments)
	r.err = err
	c.CommentCount = n
	return slots.Job{Slot: sl, Claim: c, Comments: cs}
}

// jobText splits a claim's job text (lib.lua's job_text: each item its
// length in bytes, ':' and the bytes) into the claim's claimFields values
// and its comments' JSON. Its first item is how many claim items follow:
// those past claimFieldCount are skipped, and those a text written before
// fields were appended lacks read as empty.
func jobText(s string) (claim, comments []any, err error) {
	var items []string
	for s != "" {
		size, rest, ok := strings.Cut(s, ":")
		m, err := strconv.Atoi(size)
		if !ok || err != nil || m < 0 || m > len(rest) {
			return nil, nil, fmt.Errorf("redisstore: malformed job text at item %d", len(items))
		}
		items = append(items, rest[:m])
		s = rest[m:]
	}
	if len(items) == 0 {
		return nil, nil, errors.New("redisstore: empty job text")
	}
	n, err := strconv.Atoi(items[0])
	if err != nil || n < 0 || n > len(items)-1 {
		return nil, nil, fmt.Errorf("redisstore: job text of %d items begins with %q, not a count of its claim items", len(items), items[0])
	}
	claim = make([]any, claimFieldCount)
	for i, it := range items[1 : 1+min(n, claimFieldCount)] {
		claim[i] = it
	}
	for _, it := range items[1+n:] {
		comments = append(comments, it)
	}
	return claim, comments, nil
}

// finish reads the finish p as finish_many.lua answers it: its error code,
// or ” and doneFields. An unknown code is a fault of the reply.
func (r *reply) finish(p slots.FinishParams) slots.FinishResult {
	code := r.str()
	if r.err != nil {
		return slots.FinishResult{}
	}
	if code != "" {
		e, ok := scriptErrors[code]
		if !ok {
			r.err = fmt.Errorf("redisstore: finish: unknown code %q", code)
		}
		return slots.FinishResult{Err: e}
	}
	v := r.take(doneFieldCount)
	if r.err != nil {
		return slots.FinishResult{}
	}
	sl, err := decodeDone(p, v)
	r.err = err
	return slots.FinishResult{Slot: sl}
}

// next reads the take p, as take_next_many.lua answers it: 1 and the job,
// or 0 and ErrNoJob.
func (r *reply) next(p slots.TakeNextParams) (slots.Job, error) {
	if r.int() == 0 {
		return slots.Job{}, slots.ErrNoJob
	}
	return r.job(&p), nil
}
