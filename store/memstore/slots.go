package memstore

import (
	"context"
	"slices"
	"time"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

type claimRec struct {
	claim    slots.Claim
	comments []slots.Comment
	slots    []*slotRec          // creation order
	holders  map[string]*slotRec // key ID -> its slot, any status
	// holdersCap is the size holders was made for: configuring makes room
	// for every seat up front so that a take, the hot path, never grows it.
	holdersCap int
	hasDraft   bool
	// calibrations are the claim's, in the order they were stored.
	calibrations []slots.Calibration
}

type slotRec struct {
	slot    slots.Slot
	claim   *claimRec
	seq     uint64 // creation order in this store, the job queue's "oldest"
	deleted bool   // replaced by a reconfiguration
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
	s.putClaim(c)
	return nil
}

// putClaim stores the new claim c; the caller holds the mutex and has
// checked that c.ID is free.
func (s *Store) putClaim(c slots.Claim) {
	c.Sources = append([]slots.Source{}, c.Sources...)
	c.CreatedAt = store.Milli(c.CreatedAt)
	c.UpdatedAt = store.Milli(c.UpdatedAt)
	c.CommentCount = 0
	s.claims[c.ID] = &claimRec{claim: c}
	s.claimOrder = insertSorted(s.claimOrder, c.ID)
	if c.Protocol != "" {
		u := s.protocols[c.Protocol]
		if u == nil {
			u = &slots.ProtocolUse{Name: c.Protocol}
			s.protocols[c.Protocol] = u
		}
		u.Claims++
		if c.CreatedAt.After(u.LastUsedAt) {
			u.LastUsedAt = c.CreatedAt
		}
	}
}

// ProtocolUses implements slots.ClaimStore.
func (s *Store) ProtocolUses(ctx context.Context, p slots.ProtocolUsesParams) ([]slots.ProtocolUse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []slots.ProtocolUse{}
	if p.Name != "" {
		if u := s.protocols[p.Name]; u != nil {
			out = append(out, *u)
		}
		return out, nil
	}
	for _, u := range s.protocols {
		out = append(out, *u)
	}
	slices.SortFunc(out, slots.CompareProtocolUses)
	return out[:min(len(out), max(p.Limit, 0))], nil
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
	return r.view(), nil
}

// view returns the claim as a caller may keep it, its comments counted:
// its sources are a copy.
func (r *claimRec) view() slots.Claim {
	c := r.claim
	c.Sources = append([]slots.Source{}, c.Sources...)
	c.CommentCount = len(r.comments)
	return c
}

// job is slot's job: the claim and its oldest slots.JobComments comments.
func (r *claimRec) job(slot slots.Slot) slots.Job {
	return slots.Job{Slot: slot, Claim: r.view(), Comments: slices.Clone(r.comments[:min(len(r.comments), slots.JobComments)])}
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
	type listed struct {
		claim    slots.Claim
		comments int
	}
	var found []listed
	for i := end - 1; i >= 0 && len(found) < p.Limit; i-- {
		r := s.claims[s.claimOrder[i]]
		if c := r.view(); (p.Domain == "" || c.Domain == p.Domain) && (p.Protocol == "" || c.Protocol == p.Protocol) {
			found = append(found, listed{c, len(r.comments)})
		}
	}
	if p.Order == slots.ClaimTop {
		// Stable: of the claims tied, the newest stays first.
		slices.SortStableFunc(found, func(a, b listed) int { return b.comments - a.comments })
	}
	out := make([]slots.Claim, len(found))
	for i, l := range found {
		out[i] = l.claim
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
	if c.ParentID != "" && !slices.ContainsFunc(r.comments, func(m slots.Comment) bool { return m.ID == c.ParentID }) {
		return slots.ErrParentNotFound
	}
	c.CreatedAt = store.Milli(c.CreatedAt)
	r.comments = append(r.comments, c)
	r.touch(c.CreatedAt)
	if c.CommentType == slots.CommentDraft && !r.hasDraft {
		r.hasDraft = true
		s.queueOpen(r)
	}
	return nil
}

// queueOpen indexes r's open slots in the job queue under the claim's
// domain as it is now (an entry already there stays one). The caller holds
// the mutex.
func (s *Store) queueOpen(r *claimRec) {
	for _, rec := range r.slots {
		if rec.slot.Status == slots.StatusOpen {
			s.queue.add(rec)
		}
	}
}

// touch makes at the claim's UpdatedAt when it is later.
func (r *claimRec) touch(at time.Time) {
	if at = store.Milli(at); at.After(r.claim.UpdatedAt) {
		r.claim.UpdatedAt = at
	}
}

// setDomain writes domain as r's claim's and, when the claim is in the
// job queue (it has a draft), indexes its open slots under it: what a
// Prism domain layer (UpdatePipeline) and a calibration (AddCalibration)
// write. The caller holds the mutex. The entries under the old domain drop
// lazily (jobqueue.go), and the listings read the domain from the claim.
func (s *Store) setDomain(r *claimRec, domain string, at time.Time) {
	r.claim.Domain = domain
	r.touch(at)
	if r.hasDraft {
		s.queueOpen(r)
	}
}

// ListComments implements slots.ClaimStore.
func (s *Store) ListComments(ctx context.Context, claimID string, p slots.ListCommentsParams) ([]slots.Comment, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.claims[claimID]
	if !ok {
		return nil, slots.ErrClaimNotFound
	}
	cs := r.comments
	n := min(max(p.Limit, 0), len(cs))
	if p.Newest {
		cs = cs[len(cs)-n:]
	} else {
		cs = cs[:n]
	}
	return append([]slots.Comment{}, cs...), nil
}

// PickClaim implements slots.ClaimStore under the mutex.
func (s *Store) PickClaim(ctx context.Context, p slots.PickClaimParams) (slots.ClaimJob, error) {
	if err := ctx.Err(); err != nil {
		return slots.ClaimJob{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var pool []*claimRec // newest first
	for i := len(s.claimOrder) - 1; i >= 0 && len(pool) < p.Pool; i-- {
		if r := s.claims[s.claimOrder[i]]; p.Domain == "" || r.claim.Domain == p.Domain {
			pool = append(pool, r)
		}
	}
	if len(pool) == 0 {
		return slots.ClaimJob{}, slots.ErrNoClaims
	}
	pick := pool[0]
	switch p.Strategy {
	case slots.ClaimTop:
		for _, r := range pool[1:] { // newest first: ties stay with the newest
			if len(r.comments) > len(pick.comments) {
				pick = r
			}
		}
	case slots.ClaimRandom:
		pick = pool[max(min(int(p.Random*float64(len(pool))), len(pool)-1), 0)]
	}
	comments := pick.comments[len(pick.comments)-min(max(p.CommentLimit, 0), len(pick.comments)):]
	return slots.ClaimJob{Claim: pick.view(), Comments: append([]slots.Comment{}, comments...)}, nil
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
	kept := r.slots[:0]
	for _, rec := range r.slots {
		if rec.slot.Status == slots.StatusOpen {
			rec.deleted = true // the job queue drops it lazily
			delete(s.slots, rec.slot.ID)
			continue
		}
		kept = append(kept, rec)
	}
	clear(r.slots[len(kept):])
	r.slots = kept
	if n := len(r.slots) + len(add); n > r.holdersCap {
		holders := make(map[string]*slotRec, n)
		for k, v := range r.holders {
			holders[k] = v
		}
		r.holders, r.holdersCap = holders, n
	}
	for _, sl := range add {
		s.seq++
		sl.CreatedAt = store.Milli(sl.CreatedAt)
		rec := &slotRec{slot: sl, claim: r, seq: s.seq}
		s.slots[sl.ID] = rec
		r.slots = append(r.slots, rec)
		if r.hasDraft {
			s.queue.add(rec)
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
	out := make([]slots.Slot, 0, len(r.slots))
	for _, rec := range r.slots {
		out = append(out, rec.slot)
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
	rec, ok := s.queue.pick(queueKey{role: p.Role, domain: p.Domain}, p.Random, p.AgentKeyID, p.Skip)
	if !ok {
		return slots.Job{}, slots.ErrNoJob
	}
	return rec.claim.job(rec.slot), nil
}

// TakeSlot implements slots.SlotStore.
func (s *Store) TakeSlot(ctx context.Context, p slots.TakeParams) (slots.Slot, error) {
	if err := ctx.Err(); err != nil {
		return slots.Slot{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.slots[p.SlotID]
	if !ok || rec.slot.ClaimID != p.ClaimID {
		return slots.Slot{}, slots.ErrSlotNotFound
	}
	sl, r := &rec.slot, rec.claim
	if !sl.Takeable(p.Now) {
		return slots.Slot{}, slots.ErrSlotTaken
	}
	lapsed := sl.Lapsed(p.Now)
	if held, ok := r.holders[p.Agent.KeyID]; ok && held != rec {
		return slots.Slot{}, slots.ErrSlotHeld
	}
	if lapsed {
		delete(r.holders, sl.APIKeyID)
	}
	s.assign(rec, p.Agent, p.Now, p.LeaseUntil)
	return *sl, nil
}

// FinishSlot implements slots.SlotStore.
func (s *Store) FinishSlot(ctx context.Context, p slots.FinishParams) (slots.Slot, error) {
	if err := ctx.Err(); err != nil {
		return slots.Slot{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.finish(p)
}

// ReleaseExpiredSlots implements slots.SlotStore.
func (s *Store) ReleaseExpiredSlots(ctx context.Context, now time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for id, until := range s.leased {
		if until.After(now) {
			continue
		}
		rec := s.slots[id]
		sl, r := &rec.slot, rec.claim
		delete(s.leased, id)
		delete(r.holders, sl.APIKeyID)
		sl.Status = slots.StatusOpen
		sl.APIKeyID, sl.AgentName, sl.AgentAvatarURL = "", "", ""
		sl.TakenAt, sl.LeaseExpiresAt = time.Time{}, time.Time{}
		if r.hasDraft {
			s.queue.add(rec)
		}
		n++
	}
	return n, nil
}

// CreateKey implements identity.KeyStore.
func (s *Store) CreateKey(ctx context.Context, k identity.Key) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.putKey(k)
}

// putKey is CreateKey's step; the caller holds s.mu.
func (s *Store) putKey(k identity.Key) error {
	if _, ok := s.keys[k.ID]; ok {
		return identity.ErrKeyExists
	}
	if _, ok := s.keyNames[k.Name]; ok {
		return identity.ErrKeyNameTaken
	}
	k = cloneKey(k)
	k.CreatedAt, k.RevokedAt = store.Milli(k.CreatedAt), store.Milli(k.RevokedAt)
	s.keys[k.ID] = &k
	s.keyNames[k.Name] = k.ID
	s.keyOrder = insertSorted(s.keyOrder, k.ID)
	return nil
}

func cloneKey(k identity.Key) identity.Key {
	k.Scopes = slices.Clone(k.Scopes)
	k.Hash = slices.Clone(k.Hash)
	return k
}

// GetKey implements identity.KeyStore.
func (s *Store) GetKey(ctx context.Context, id string) (identity.Key, error) {
	if err := ctx.Err(); err != nil {
		return identity.Key{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.keys[id]
	if !ok {
		return identity.Key{}, identity.ErrKeyNotFound
	}
	return cloneKey(*k), nil
}

// GetKeys implements identity.KeyStore.
func (s *Store) GetKeys(ctx context.Context, ids []string) ([]identity.Key, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]identity.Key, 0, len(ids))
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if k, ok := s.keys[id]; ok && !seen[id] {
			seen[id] = true
			out = append(out, cloneKey(*k))
		}
	}
	return out, nil
}

// ListKeys implements identity.KeyStore.
func (s *Store) ListKeys(ctx context.Context) ([]identity.Key, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]identity.Key, 0, len(s.keyOrder))
	for _, id := range s.keyOrder {
		out = append(out, cloneKey(*s.keys[id]))
	}
	return out, nil
}

// RevokeKey implements identity.KeyStore.
func (s *Store) RevokeKey(ctx context.Context, id string, at time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.keys[id]
	if !ok {
		return identity.ErrKeyNotFound
	}
	if k.RevokedAt.IsZero() {
		k.RevokedAt = store.Milli(at)
	}
	return nil
}

// SetSigningKey implements identity.KeyStore.
func (s *Store) SetSigningKey(ctx context.Context, id, address string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.keys[id]
	if !ok {
		return identity.ErrKeyNotFound
	}
	k.SigningKeyAddress = address
	return nil
}

// Balance implements identity.KeyStore.
func (s *Store) Balance(ctx context.Context, keyID string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.balances[keyID], nil
}

// deviceForget is how long after its expiry a device login is forgotten.
const deviceForget = 24 * time.Hour

// deviceData holds device logins by ID and their user codes.
type deviceData struct {
	byID   map[string]*identity.DeviceCode
	byUser map[string]string // user code -> ID
}

// forgetDevices drops logins expired more than deviceForget ago.
func (d *deviceData) forget(now time.Time) {
	for id, dc := range d.byID {
		if dc.ExpiresAt.Add(deviceForget).Before(now) {
			delete(d.byUser, dc.UserCode)
			delete(d.byID, id)
		}
	}
}

func cloneDevice(d *identity.DeviceCode) identity.DeviceCode {
	c := *d
	c.Scopes = slices.Clone(d.Scopes)
	return c
}

// CreateDeviceCode implements identity.DeviceStore.
func (s *Store) CreateDeviceCode(ctx context.Context, d identity.DeviceCode) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.devices.byID == nil {
		s.devices = deviceData{byID: map[string]*identity.DeviceCode{}, byUser: map[string]string{}}
	}
	s.devices.forget(d.CreatedAt)
	if _, ok := s.devices.byID[d.ID]; ok {
		return identity.ErrDeviceCodeExists
	}
	if _, ok := s.devices.byUser[d.UserCode]; ok {
		return identity.ErrDeviceCodeExists
	}
	c := cloneDevice(&d)
	c.CreatedAt, c.ExpiresAt = store.Milli(c.CreatedAt), store.Milli(c.ExpiresAt)
	c.ApprovedAt, c.ConsumedAt = store.Milli(c.ApprovedAt), store.Milli(c.ConsumedAt)
	s.devices.byID[d.ID] = &c
	s.devices.byUser[d.UserCode] = d.ID
	return nil
}

// deviceByUser returns the login of a user code; the caller holds mu.
func (s *Store) deviceByUser(userCode string) (*identity.DeviceCode, error) {
	id, ok := s.devices.byUser[userCode]
	if !ok {
		return nil, identity.ErrDeviceCodeNotFound
	}
	return s.devices.byID[id], nil
}

// DeviceCodeByUserCode implements identity.DeviceStore.
func (s *Store) DeviceCodeByUserCode(ctx context.Context, userCode string) (identity.DeviceCode, error) {
	if err := ctx.Err(); err != nil {
		return identity.DeviceCode{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.deviceByUser(userCode)
	if err != nil {
		return identity.DeviceCode{}, err
	}
	return cloneDevice(d), nil
}

// ApproveDeviceCode implements identity.DeviceStore.
func (s *Store) ApproveDeviceCode(ctx context.Context, userCode, by string, now time.Time) (identity.DeviceCode, error) {
	if err := ctx.Err(); err != nil {
		return identity.DeviceCode{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.deviceByUser(userCode)
	switch {
	case err != nil:
		return identity.DeviceCode{}, err
	case d.Expired(now):
		return identity.DeviceCode{}, identity.ErrDeviceCodeExpired
	case d.Status != identity.DevicePending:
		return identity.DeviceCode{}, identity.ErrDeviceCodeUsed
	}
	d.Status, d.ApprovedBy, d.ApprovedAt = identity.DeviceApproved, by, store.Milli(now)
	return cloneDevice(d), nil
}

// ConsumeDeviceCode implements identity.DeviceStore.
func (s *Store) ConsumeDeviceCode(ctx context.Context, id string, key identity.Key) (identity.DeviceCode, error) {
	if err := ctx.Err(); err != nil {
		return identity.DeviceCode{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.devices.byID[id]
	switch {
	case !ok:
		return identity.DeviceCode{}, identity.ErrDeviceCodeNotFound
	case d.Status == identity.DeviceConsumed:
		return identity.DeviceCode{}, identity.ErrDeviceCodeConsumed
	case d.Expired(key.CreatedAt):
		return identity.DeviceCode{}, identity.ErrDeviceCodeExpired
	case d.Status == identity.DeviceApproved:
		key.Name, key.AvatarURL, key.Scopes = d.Name, d.AvatarURL, d.Scopes
		if err := s.putKey(key); err != nil {
			return identity.DeviceCode{}, err
		}
		d.Status, d.ConsumedAt = identity.DeviceConsumed, store.Milli(key.CreatedAt)
	}
	return cloneDevice(d), nil
}
