package memstore

import (
	"context"
	"slices"

	"github.com/agorahq/agora/slots"
)

type claimRec struct {
	claim    slots.Claim
	comments []slots.Comment
	slotIDs  []string          // creation order
	holders  map[string]string // key ID -> slot ID, any status
	hasDraft bool
}

// insertSorted inserts id into the ascending slice ids. IDs are time-ordered,
// so this is an append in the common case.
func insertSorted(ids []string, id string) []string {
	if n := len(ids); n == 0 || ids[n-1] < id {
		return append(ids, id)
	}
	i, _ := slices.BinarySearch(ids, id)
	return slices.Insert(ids, i, id)
}

// CreateClaim implements slots.ClaimStore.
func (s *Store) CreateClaim(ctx context.Context, c slots.Claim) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.claims[c.ID]; ok {
		return slots.ErrClaimExists
	}
	s.claims[c.ID] = &claimRec{claim: c, holders: map[string]string{}}
	s.claimOrder = insertSorted(s.claimOrder, c.ID)
	return nil
}

// GetClaim implements slots.ClaimStore.
func (s *Store) GetClaim(ctx context.Context, id string) (slots.Claim, error) {
	if err := ctx.Err(); err != nil {
		return slots.Claim{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.claims[id]
	if !ok {
		return slots.Claim{}, slots.ErrClaimNotFound
	}
	return r.claim, nil
}

// ListClaims implements slots.ClaimStore.
func (s *Store) ListClaims(ctx context.Context, p slots.ListClaimsParams) ([]slots.Claim, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	end := len(s.claimOrder)
	if p.Before != "" {
		end, _ = slices.BinarySearch(s.claimOrder, p.Before)
	}
	out := []slots.Claim{}
	for i := end - 1; i >= 0 && len(out) < p.Limit; i-- {
		out = append(out, s.claims[s.claimOrder[i]].claim)
	}
	return out, nil
}

// AddComment implements slots.ClaimStore.
func (s *Store) AddComment(ctx context.Context, c slots.Comment) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.claims[c.ClaimID]
	if !ok {
		return slots.ErrClaimNotFound
	}
	r.comments = append(r.comments, c)
	if c.CommentType == slots.CommentDraft && !r.hasDraft {
		r.hasDraft = true
		for _, id := range r.slotIDs {
			if sl := s.slots[id]; sl.Status == slots.StatusOpen {
				s.queue.add(sl, r.claim.Domain)
			}
		}
	}
	return nil
}

// ListComments implements slots.ClaimStore.
func (s *Store) ListComments(ctx context.Context, claimID string) ([]slots.Comment, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.claims[claimID]
	if !ok {
		return nil, slots.ErrClaimNotFound
	}
	return append([]slots.Comment{}, r.comments...), nil
}

// ReplaceOpenSlots implements slots.SlotStore.
func (s *Store) ReplaceOpenSlots(ctx context.Context, claimID string, add []slots.Slot) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.claims[claimID]
	if !ok {
		return slots.ErrClaimNotFound
	}
	kept := r.slotIDs[:0]
	for _, id := range r.slotIDs {
		sl := s.slots[id]
		if sl.Status == slots.StatusOpen {
			s.queue.remove(sl, r.claim.Domain)
			delete(s.slots, id)
			continue
		}
		kept = append(kept, id)
	}
	r.slotIDs = kept
	for _, sl := range add {
		sl := sl
		s.slots[sl.ID] = &sl
		r.slotIDs = append(r.slotIDs, sl.ID)
		if r.hasDraft {
			s.queue.add(&sl, r.claim.Domain)
		}
	}
	return nil
}

// ListSlots implements slots.SlotStore.
func (s *Store) ListSlots(ctx context.Context, claimID string) ([]slots.Slot, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.claims[claimID]
	if !ok {
		return nil, slots.ErrClaimNotFound
	}
	out := make([]slots.Slot, 0, len(r.slotIDs))
	for _, id := range r.slotIDs {
		out = append(out, *s.slots[id])
	}
	return out, nil
}

// NextOpenSlot implements slots.SlotStore.
func (s *Store) NextOpenSlot(ctx context.Context, p slots.NextSlotParams) (slots.Job, error) {
	if err := ctx.Err(); err != nil {
		return slots.Job{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.queue.pick(queueKey{role: p.Role, domain: p.Domain}, p.Random)
	if !ok {
		return slots.Job{}, slots.ErrNoJob
	}
	sl := s.slots[id]
	r := s.claims[sl.ClaimID]
	return slots.Job{Slot: *sl, Claim: r.claim, Comments: append([]slots.Comment{}, r.comments...)}, nil
}

// TakeSlot implements slots.SlotStore.
func (s *Store) TakeSlot(ctx context.Context, p slots.TakeParams) (slots.Slot, error) {
	if err := ctx.Err(); err != nil {
		return slots.Slot{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sl, ok := s.slots[p.SlotID]
	if !ok || sl.ClaimID != p.ClaimID {
		return slots.Slot{}, slots.ErrSlotNotFound
	}
	r := s.claims[sl.ClaimID]
	lapsed := sl.Status == slots.StatusTaken && sl.LeaseExpiresAt != 0 && sl.LeaseExpiresAt <= p.Now
	if sl.Status != slots.StatusOpen && !lapsed {
		return slots.Slot{}, slots.ErrSlotTaken
	}
	if held, ok := r.holders[p.Agent.KeyID]; ok && held != sl.ID {
		return slots.Slot{}, slots.ErrSlotHeld
	}
	if lapsed {
		delete(r.holders, sl.APIKeyID)
	} else if r.hasDraft {
		s.queue.remove(sl, r.claim.Domain)
	}
	sl.Status = slots.StatusTaken
	sl.APIKeyID, sl.AgentName, sl.AgentAvatarURL = p.Agent.KeyID, p.Agent.Name, p.Agent.AvatarURL
	sl.TakenAt = p.Now
	sl.LeaseExpiresAt = p.LeaseUntil
	r.holders[p.Agent.KeyID] = sl.ID
	if p.LeaseUntil != 0 {
		s.leased[sl.ID] = p.LeaseUntil
	} else {
		delete(s.leased, sl.ID)
	}
	return *sl, nil
}

// FinishSlot implements slots.SlotStore.
func (s *Store) FinishSlot(ctx context.Context, p slots.FinishParams) (slots.Slot, error) {
	if err := ctx.Err(); err != nil {
		return slots.Slot{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sl, ok := s.slots[p.SlotID]
	if !ok || sl.ClaimID != p.ClaimID {
		return slots.Slot{}, slots.ErrSlotNotFound
	}
	if err := finishError(sl, p); err != nil {
		return slots.Slot{}, err
	}
	sl.Status = slots.StatusDone
	sl.DoneAt = p.Now
	delete(s.leased, sl.ID)
	s.balances[p.KeyID] += p.Credit
	return *sl, nil
}

// finishError says why p may not finish sl, in the order of the contract.
func finishError(sl *slots.Slot, p slots.FinishParams) error {
	switch {
	case sl.Status == slots.StatusOpen:
		return slots.ErrSlotNotTaken
	case sl.APIKeyID != p.KeyID:
		return slots.ErrNotSlotOwner
	case sl.Status != slots.StatusTaken:
		return slots.ErrSlotNotTaken
	case sl.LeaseExpiresAt != 0 && sl.LeaseExpiresAt <= p.Now:
		return slots.ErrSlotNotTaken
	}
	return nil
}

// ReleaseExpiredSlots implements slots.SlotStore.
func (s *Store) ReleaseExpiredSlots(ctx context.Context, now int64) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for id, until := range s.leased {
		if until > now {
			continue
		}
		sl := s.slots[id]
		delete(s.leased, id)
		r := s.claims[sl.ClaimID]
		delete(r.holders, sl.APIKeyID)
		sl.Status = slots.StatusOpen
		sl.APIKeyID, sl.AgentName, sl.AgentAvatarURL = "", "", ""
		sl.TakenAt, sl.LeaseExpiresAt = 0, 0
		if r.hasDraft {
			s.queue.add(sl, r.claim.Domain)
		}
		n++
	}
	return n, nil
}

// CreateKey implements slots.KeyStore.
func (s *Store) CreateKey(ctx context.Context, k slots.Key) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.keys[k.ID]; ok {
		return slots.ErrKeyExists
	}
	k = cloneKey(k)
	s.keys[k.ID] = &k
	s.keyOrder = insertSorted(s.keyOrder, k.ID)
	return nil
}

func cloneKey(k slots.Key) slots.Key {
	k.Scopes = slices.Clone(k.Scopes)
	k.Hash = slices.Clone(k.Hash)
	return k
}

// GetKey implements slots.KeyStore.
func (s *Store) GetKey(ctx context.Context, id string) (slots.Key, error) {
	if err := ctx.Err(); err != nil {
		return slots.Key{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.keys[id]
	if !ok {
		return slots.Key{}, slots.ErrKeyNotFound
	}
	return cloneKey(*k), nil
}

// ListKeys implements slots.KeyStore.
func (s *Store) ListKeys(ctx context.Context) ([]slots.Key, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]slots.Key, 0, len(s.keyOrder))
	for _, id := range s.keyOrder {
		out = append(out, cloneKey(*s.keys[id]))
	}
	return out, nil
}

// RevokeKey implements slots.KeyStore.
func (s *Store) RevokeKey(ctx context.Context, id string, at int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.keys[id]
	if !ok {
		return slots.ErrKeyNotFound
	}
	if k.RevokedAt == 0 {
		k.RevokedAt = at
	}
	return nil
}

// Balance implements slots.KeyStore.
func (s *Store) Balance(ctx context.Context, keyID string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.balances[keyID], nil
}
