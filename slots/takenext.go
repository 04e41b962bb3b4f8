package slots

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/store"
)

// TakeNextParams is the input of TakeNextSlot: the pick of NextOpenSlot and
// the take of TakeSlot, decided together.
type TakeNextParams struct {
	// Next filters and picks as in NextOpenSlot; its AgentKeyID is
	// Agent.KeyID. Its Skip is how many of the oldest eligible slots other
	// takes in flight are taking: the pick may start past that many, and
	// takes an older one only when none past them is free. Callers taking
	// at once never get the same slot, whatever it says.
	Next  NextSlotParams
	Agent Agent     // the key taking the slot
	Now   time.Time // becomes TakenAt
	// LeaseUntil is when the take lapses; zero means never.
	LeaseUntil time.Time
}

// nextSlotParams checks q and turns it into the store's pick for the agent
// of key ID agentID (empty: nobody in particular): the oldest, or a random
// one with a fresh draw.
func nextSlotParams(q JobQuery, agentID string) (NextSlotParams, error) {
	p := NextSlotParams{Role: q.Role, Domain: q.Domain, AgentKeyID: agentID, Random: -1}
	switch q.Strategy {
	case "", StrategyOldest:
	case StrategyRandom:
		p.Random = rand.Float64()
	default:
		return NextSlotParams{}, store.Errorf(store.ErrInvalid, "invalid_strategy", "strategy must be oldest or random")
	}
	if q.Role != "" && !q.Role.Valid() {
		return NextSlotParams{}, store.Errorf(store.ErrInvalid, "invalid_role", "invalid role %q", q.Role)
	}
	return p, nil
}

// takeParams is a take by agent now, with the service's lease; the caller
// names the slot.
func (s *Service) takeParams(agent identity.Key) TakeParams {
	now := s.clock()
	p := TakeParams{
		Agent: Agent{KeyID: agent.ID, Name: agent.Name, AvatarURL: agent.AvatarURL},
		Now:   now,
	}
	if s.lease > 0 {
		p.LeaseUntil = store.Milli(now.Add(s.lease))
	}
	return p
}

// TakeNext finds the next job for the caller's key (identity.KeyFrom) as
// NextJob does and takes its slot for that key in the same atomic step of
// the store, so concurrent agents never receive the same slot and none
// loses a race: each gets a different slot, or ErrNoJob when no eligible
// slot is left for it. The returned job's slot is taken by the caller.
func (s *Service) TakeNext(ctx context.Context, q JobQuery) (_ Job, err error) {
	ctx, done := s.obs.Call(ctx, "slots.TakeNext")
	defer func() { done(err) }()
	agent, err := identity.KeyFrom(ctx)
	if err != nil {
		return Job{}, err
	}
	next, err := nextSlotParams(q, agent.ID)
	if err != nil {
		return Job{}, err
	}
	t := s.takeParams(agent)
	p := TakeNextParams{Next: next, Agent: t.Agent, Now: t.Now, LeaseUntil: t.LeaseUntil}
	r, err := s.takes.Do(ctx, p)
	job := r.Job
	if err == nil {
		err = r.Err
	}
	if err == nil {
		PublishClaimChange(ctx, s.notifier, job.Claim.ID)
	}
	return job, err
}

// MaxSpread bounds how far past the oldest eligible slot NextJob's oldest
// strategy reaches under contention.
const MaxSpread = 64

// spread counts the oldest-first NextJob calls in flight in this Service.
// The n-th concurrent caller is offered the n-th oldest eligible slot, so a
// crowd asking at once is spread over the oldest slots instead of all being
// handed the same one, and all but one losing the race for it. Alone, a
// caller gets the oldest: FIFO as the original has it, and never a slot younger
// than the oldest eligible ones already being offered.
type spread struct{ inflight atomic.Int64 }

// enter returns the skip for a new caller; leave must follow.
func (c *spread) enter() int { return int(min(c.inflight.Add(1)-1, MaxSpread-1)) }

func (c *spread) leave() { c.inflight.Add(-1) }

// takers counts the seats this Service's oldest-first take calls are
// taking. A call is told (Skip) how many its concurrent calls are taking,
// so that a store whose concurrent takes contend for the same rows can
// start its pick past them. The call that started first is not counted:
// it is the likeliest to have committed already, and a call counted after
// committing would make the pick pass over slots that are free again (see
// docs/performance). One call at a time, the head, skips nothing, so a
// slot passed over all the same goes to the next head.
type takers struct {
	mu    sync.Mutex
	calls []takeCall // in flight, in the order they started
	last  uint64
}

// takeCall is a take call in flight.
type takeCall struct {
	id    uint64
	seats int
	head  bool
}

// enter counts a call of n seats in flight and returns its skip and the
// call, for leave.
func (t *takers) enter(n int) (skip int, c takeCall) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.last++
	c = takeCall{id: t.last, seats: n, head: true}
	for i, o := range t.calls {
		c.head = c.head && !o.head
		if i > 0 {
			skip += o.seats
		}
	}
	if c.head {
		skip = 0
	}
	t.calls = append(t.calls, c)
	return skip, c
}

func (t *takers) leave(c takeCall) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.calls = slices.DeleteFunc(t.calls, func(o takeCall) bool { return o.id == c.id })
}

// spreadTakes sets the Skip of the oldest-first picks among n items (each
// item's pick, as next returns it) and returns the leave to call once the
// store has answered them.
func (t *takers) spreadTakes(n int, next func(i int) *NextSlotParams) (leave func()) {
	oldest := 0
	for i := range n {
		if next(i).Random < 0 {
			oldest++
		}
	}
	if oldest == 0 {
		return func() {}
	}
	skip, call := t.enter(oldest)
	for i := range n {
		if p := next(i); p.Random < 0 {
			p.Skip = skip
		}
	}
	return func() { t.leave(call) }
}
