package slots

import (
	"context"
	"errors"

	"github.com/agorahq/agora/identity"
)

// FinishTakeParams is one item of FinishAndTakeNextSlots: an agent's done
// and, when the done succeeds, the same agent's next take. Next.Agent is
// the finishing agent (its KeyID is Finish.KeyID).
type FinishTakeParams struct {
	Finish FinishParams   // the done, as FinishSlot takes it
	Next   TakeNextParams // the take tried when the done succeeds
}

// FinishTakeResult is one item's answer of FinishAndTakeNextSlots: the
// finish's, as FinishSlots answers it, and, when the finish succeeded, the
// take's, as TakeNextSlots answers it (ErrNoJob when no seat is left for
// the agent). When Err is set no take was tried and Next is zero.
type FinishTakeResult struct {
	Slot    Slot  // the finished slot as done; zero when Err is set
	Err     error // the finish's error
	Next    Job   // the job taken; zero when Err or NextErr is set
	NextErr error // the take's error; nil when Err is set
}

// DoneNext is what DoneAndTakeNext hands back: the slot as done and the
// agent's next job, its seat taken, or nil when no eligible seat is left.
type DoneNext struct {
	Slot Slot // the slot as done
	Next *Job // the next job, its slot taken by the caller; nil when none is eligible
}

// DoneAndTakeNext marks the caller's slot done and credits it as Done does,
// and in the same atomic step of the store takes the caller's next seat as
// TakeNext(ctx, q) does: an agent working through the queue pays one
// round trip (and, on PostgreSQL, one commit) per seat instead of two. The
// error is Done's (then no seat was taken) or q's validation; when the done
// succeeded and no seat is eligible, Next is nil and the error is nil. With
// WithDoneBatching, concurrent calls are coalesced into one store call.
func (s *Service) DoneAndTakeNext(ctx context.Context, claimID, slotID string, q JobQuery) (_ DoneNext, err error) {
	ctx, done := s.obs.Call(ctx, "slots.DoneAndTakeNext")
	defer func() { done(err) }()
	agent, err := identity.KeyFrom(ctx)
	if err != nil {
		return DoneNext{}, err
	}
	next, err := nextSlotParams(q, agent.ID)
	if err != nil {
		return DoneNext{}, err
	}
	t := s.takeParams(agent)
	p := FinishTakeParams{
		Finish: FinishParams{ClaimID: claimID, SlotID: slotID, KeyID: agent.ID, Now: t.Now, Credit: RewardRoleSlot},
		Next:   TakeNextParams{Next: next, Agent: t.Agent, Now: t.Now, LeaseUntil: t.LeaseUntil},
	}
	r, err := s.doneTakes.Do(ctx, p)
	if err == nil {
		err = r.Err
	}
	if err != nil {
		return DoneNext{}, err
	}
	PublishClaimChange(ctx, s.notifier, claimID)
	out := DoneNext{Slot: r.Slot}
	switch {
	case r.NextErr == nil:
		next := r.Next // not &r.Next, which would keep all of r on the heap
		out.Next = &next
		PublishClaimChange(ctx, s.notifier, r.Next.Claim.ID)
	case !errors.Is(r.NextErr, ErrNoJob):
		return out, r.NextErr
	}
	return out, nil
}
