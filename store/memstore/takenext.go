package memstore

import (
	"context"
	"time"

	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// assign gives rec's slot to agent at now: the take of TakeSlot and
// TakeNextSlot once the checks passed. The caller holds s.mu.
func (s *Store) assign(rec *slotRec, agent slots.Agent, now, leaseUntil time.Time) {
	sl := &rec.slot
	sl.Status = slots.StatusTaken
	sl.APIKeyID, sl.AgentName, sl.AgentAvatarURL = agent.KeyID, agent.Name, agent.AvatarURL
	sl.TakenAt = store.Milli(now)
	sl.LeaseExpiresAt = store.Milli(leaseUntil)
	rec.claim.holders[agent.KeyID] = rec
	if !leaseUntil.IsZero() {
		s.leased[sl.ID] = sl.LeaseExpiresAt
	} else {
		delete(s.leased, sl.ID)
	}
}

// TakeNextSlot implements slots.SlotStore under one lock: the job queue's
// pick (which already leaves out claims the agent holds) and the take.
func (s *Store) TakeNextSlot(ctx context.Context, p slots.TakeNextParams) (slots.Job, error) {
	if err := ctx.Err(); err != nil {
		return slots.Job{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.takeNext(p)
}

// takeNext is TakeNextSlot's step; the caller holds s.mu.
func (s *Store) takeNext(p slots.TakeNextParams) (slots.Job, error) {
	rec, ok := s.queue.pick(queueKey{role: p.Next.Role, domain: p.Next.Domain}, p.Next.Random, p.Agent.KeyID, 0)
	if !ok {
		return slots.Job{}, slots.ErrNoJob
	}
	s.assign(rec, p.Agent, p.Now, p.LeaseUntil)
	return rec.claim.job(rec.slot), nil
}

// TakeNextSlots implements slots.SlotStore under one lock.
func (s *Store) TakeNextSlots(ctx context.Context, ps []slots.TakeNextParams) ([]slots.JobResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]slots.JobResult, len(ps))
	for i, p := range ps {
		out[i].Job, out[i].Err = s.takeNext(p)
	}
	return out, nil
}

// finish is FinishSlot's step; the caller holds s.mu.
func (s *Store) finish(p slots.FinishParams) (slots.Slot, error) {
	rec, ok := s.slots[p.SlotID]
	if !ok || rec.slot.ClaimID != p.ClaimID {
		return slots.Slot{}, slots.ErrSlotNotFound
	}
	sl := &rec.slot
	if err := sl.FinishError(p.KeyID, p.Now); err != nil {
		return slots.Slot{}, err
	}
	sl.Status = slots.StatusDone
	sl.DoneAt = store.Milli(p.Now)
	delete(s.leased, sl.ID)
	s.balances[p.KeyID] += p.Credit
	return *sl, nil
}

// FinishSlots implements slots.SlotStore under one lock.
func (s *Store) FinishSlots(ctx context.Context, ps []slots.FinishParams) ([]slots.FinishResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]slots.FinishResult, len(ps))
	for i, p := range ps {
		out[i].Slot, out[i].Err = s.finish(p)
	}
	return out, nil
}

// FinishAndTakeNextSlots implements slots.SlotStore under one lock: each
// item's finish, then its agent's take.
func (s *Store) FinishAndTakeNextSlots(ctx context.Context, ps []slots.FinishTakeParams) ([]slots.FinishTakeResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]slots.FinishTakeResult, len(ps))
	for i, p := range ps {
		r := &out[i]
		if r.Slot, r.Err = s.finish(p.Finish); r.Err == nil {
			r.Next, r.NextErr = s.takeNext(p.Next)
		}
	}
	return out, nil
}
