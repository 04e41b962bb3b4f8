package prism

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync/atomic"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/slots"
)

// takeWorkAttempts bounds how many slots TakeNextWork tries before it
// gives up with the last refusal: each try after the first follows a race
// another agent won.
const takeWorkAttempts = 8

// takers counts a Service's TakeNextWork calls in flight, so a crowd is
// spread over the work queue instead of all trying its oldest slot.
type takers struct{ n atomic.Int64 }

// TakeNextWork finds the next stage slot for the caller's key as NextWork
// does (q's layer, role, type, domain and strategy) and takes it, in one
// call: an agent asking alone gets the slot NextWork would have shown it,
// taken. Callers asking at the same time are spread at random over the
// eligible slots rather than all trying the oldest, and a slot another
// agent took first sends the caller on to another eligible slot at once,
// so no caller gets an error for a race it lost unless every try is lost.
// The take is Take's: one atomic step of the store, exactly one winner,
// one slot per agent per layer. It returns slots.ErrNoJob when no slot is
// eligible.
func (s *Service) TakeNextWork(ctx context.Context, q WorkQuery) (_ Work, err error) {
	ctx, done := s.obs.Call(ctx, "prism.TakeNextWork")
	defer func() { done(err) }()
	agent, err := identity.KeyFrom(ctx)
	if err != nil {
		return Work{}, err
	}
	q, err = q.pick()
	if err != nil {
		return Work{}, err
	}
	crowd := s.takers.n.Add(1) > 1
	defer s.takers.n.Add(-1)
	for range takeWorkAttempts {
		if crowd || q.Strategy == slots.StrategyRandom {
			q.Random = rand.Float64()
		}
		var w Work
		if w, err = s.nextWork(ctx, agent, q); err != nil {
			return Work{}, err
		}
		var p Pipeline
		w.Slot, p, err = s.Take(ctx, w.Claim.ID, w.Slot.ID)
		if err == nil {
			w.Pipeline = p
			return w, nil
		}
		if !errors.Is(err, slots.ErrSlotTaken) && !errors.Is(err, ErrLayerHeld) {
			return Work{}, err
		}
		crowd = true // lost a race: the crowd is here
	}
	return Work{}, err
}
