package memstore

import (
	"context"

	"github.com/agorahq/agora/slots"
)

// assign gives rec's slot to agent at now: the take of TakeSlot and
// TakeNextSlot once the checks passed. The caller holds s.mu.
func (s *Store) assign(rec *slotRec, agent slots.Agent, now, leaseUntil int64) {
	sl := &rec.slot
	sl.Status = slots.StatusTaken
	sl.APIKeyID, sl.AgentName, sl.AgentAvatarURL = agent.KeyID, agent.Name, agent.AvatarURL
	sl.TakenAt = now
	sl.LeaseExpiresAt = leaseUntil
	rec.claim.holders[agent.KeyID] = rec
	if leaseUntil != 0 {
		s.leased[sl.ID] = leaseUntil
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
	p.Next.AgentKeyID = p.Agent.KeyID
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.queue.pick(queueKey{role: p.Next.Role, domain: p.Next.Domain}, p.Next.Random, p.Next.AgentKeyID)
	if !ok {
		return slots.Job{}, slots.ErrNoJob
	}
	s.assign(rec, p.Agent, p.Now, p.LeaseUntil)
	r := rec.claim
	return slots.Job{Slot: rec.slot, Claim: r.claim, Comments: append([]slots.Comment{}, r.comments...)}, nil
}
