package memstore

import (
	"context"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	"github.com/google/btree"

	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

var _ prism.Store = (*Store)(nil)

// prismData is the prism part of the store, under Store.mu.
type prismData struct {
	protocols map[string]prism.Protocol
	pipelines map[string]prism.Pipeline
	// work indexes the open slots of active pipelines under every
	// combination of their role, layer and domain, by slot ID (oldest
	// first); workOf remembers what each claim put there.
	work   map[workKey]*btree.BTreeG[prism.WorkRef]
	workOf map[string][]workEntry
	// consensus holds the records posted for each claim, oldest first.
	consensus map[string][]prism.ConsensusRecord
}

// workKey names one index of work: an empty role or domain, or the layer
// anyLayer, is the index of every one.
type workKey struct {
	role   string
	layer  int
	domain string
}

// anyLayer is workKey's layer for the index of every layer (0 is a layer).
const anyLayer = -1

// layerKey is the workKey layer a query's Layer reads.
func layerKey(layer *int) int {
	if layer == nil {
		return anyLayer
	}
	return *layer
}

type workEntry struct {
	key workKey
	ref prism.WorkRef
}

func lessRef(a, b prism.WorkRef) bool { return a.SlotID < b.SlotID }

func (d *prismData) init() {
	if d.protocols == nil {
		d.protocols = map[string]prism.Protocol{}
		d.pipelines = map[string]prism.Pipeline{}
		d.work = map[workKey]*btree.BTreeG[prism.WorkRef]{}
		d.workOf = map[string][]workEntry{}
	}
}

// reindex replaces a claim's entries in the work index by p's open slots.
func (d *prismData) reindex(p prism.Pipeline) {
	for _, e := range d.workOf[p.ClaimID] {
		if t := d.work[e.key]; t != nil {
			t.Delete(e.ref)
			if t.Len() == 0 {
				delete(d.work, e.key)
			}
		}
	}
	var entries []workEntry
	for _, s := range p.OpenSlots() {
		ref := prism.WorkRef{ClaimID: p.ClaimID, SlotID: s.ID}
		for _, role := range []string{"", s.Role} {
			for _, layer := range []int{anyLayer, s.Layer} {
				for _, domain := range []string{"", p.Domain} {
					k := workKey{role, layer, domain}
					t := d.work[k]
					if t == nil {
						t = btree.NewG(16, lessRef)
						d.work[k] = t
					}
					t.ReplaceOrInsert(ref)
					entries = append(entries, workEntry{k, ref})
				}
			}
		}
	}
	if entries == nil {
		delete(d.workOf, p.ClaimID)
	} else {
		d.workOf[p.ClaimID] = entries
	}
}

func clonePipeline(p prism.Pipeline) prism.Pipeline { return p.Clone() }

// storedPipeline is a copy of p as the other backends store it: its times
// in milliseconds, in UTC (store.Milli), so reads answer alike everywhere.
func storedPipeline(p prism.Pipeline) prism.Pipeline {
	p = p.Clone()
	for i := range p.Slots {
		sl := &p.Slots[i]
		sl.TakenAt, sl.DoneAt = store.Milli(sl.TakenAt), store.Milli(sl.DoneAt)
		sl.LeaseExpiresAt, sl.CreatedAt = store.Milli(sl.LeaseExpiresAt), store.Milli(sl.CreatedAt)
	}
	for i := range p.Flags {
		f := &p.Flags[i]
		f.CreatedAt, f.ResolvedAt = store.Milli(f.CreatedAt), store.Milli(f.ResolvedAt)
	}
	p.CreatedAt, p.UpdatedAt = store.Milli(p.CreatedAt), store.Milli(p.UpdatedAt)
	return p
}

// PutProtocol implements prism.Store.
func (s *Store) PutProtocol(ctx context.Context, p prism.Protocol) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prism.init()
	s.prism.protocols[p.ID] = p.Clone()
	return nil
}

// GetProtocol implements prism.Store.
func (s *Store) GetProtocol(ctx context.Context, id string) (prism.Protocol, error) {
	if err := ctx.Err(); err != nil {
		return prism.Protocol{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.prism.protocols[id]
	if !ok {
		return prism.Protocol{}, prism.ErrProtocolNotFound
	}
	return p.Clone(), nil
}

// ListProtocols implements prism.Store.
func (s *Store) ListProtocols(ctx context.Context) ([]prism.Protocol, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []prism.Protocol{}
	for _, p := range s.prism.protocols {
		out = append(out, p.Clone())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// CreateClaimPipeline implements prism.Store: both checks and both writes
// under the mutex.
func (s *Store) CreateClaimPipeline(ctx context.Context, c slots.Claim, p prism.Pipeline) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prism.init()
	if _, ok := s.claims[c.ID]; ok {
		return slots.ErrClaimExists
	}
	if _, ok := s.prism.pipelines[p.ClaimID]; ok {
		return prism.ErrPipelineExists
	}
	s.putClaim(c)
	p = storedPipeline(p)
	s.prism.pipelines[p.ClaimID] = p
	s.prism.reindex(p)
	return nil
}

// GetPipeline implements prism.Store.
func (s *Store) GetPipeline(ctx context.Context, claimID string) (prism.Pipeline, error) {
	if err := ctx.Err(); err != nil {
		return prism.Pipeline{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.prism.pipelines[claimID]
	if !ok {
		return prism.Pipeline{}, prism.ErrPipelineNotFound
	}
	return clonePipeline(p), nil
}

// UpdatePipeline implements prism.Store: the comparison, the effects and,
// on a conflict, the copy of the stored pipeline, under the mutex.
func (s *Store) UpdatePipeline(ctx context.Context, next prism.Pipeline, fx prism.Effects) (prism.Pipeline, error) {
	if err := ctx.Err(); err != nil {
		return prism.Pipeline{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.prism.pipelines[next.ClaimID]
	if !ok {
		return prism.Pipeline{}, prism.ErrPipelineNotFound
	}
	if cur.Version != next.Version-1 {
		return clonePipeline(cur), prism.ErrVersionConflict
	}
	next = storedPipeline(next)
	s.prism.pipelines[next.ClaimID] = next
	s.prism.reindex(next)
	for _, c := range fx.Credits {
		s.balances[c.KeyID] += c.Amount
	}
	if fx.Domain != "" {
		s.setDomain(s.claims[next.ClaimID], fx.Domain, next.UpdatedAt)
	}
	return prism.Pipeline{}, nil
}

// FindWork implements prism.Store: a walk of the index of q's role, layer
// and domain from q.After, passing over the consensus slots (those of the
// consensus index) for PhaseWork.
func (s *Store) FindWork(ctx context.Context, q prism.WorkQuery) ([]prism.WorkRef, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.prism.work[workKey{q.Role, layerKey(q.Layer), q.Domain}]
	if t == nil || q.Limit <= 0 {
		return nil, nil
	}
	var consensus *btree.BTreeG[prism.WorkRef]
	if q.Phase == prism.PhaseWork && q.Role == "" { // a role names one phase's slots
		consensus = s.prism.work[workKey{prism.RoleConsensus, layerKey(q.Layer), q.Domain}]
	}
	var out []prism.WorkRef
	t.AscendGreaterOrEqual(prism.WorkRef{SlotID: q.After}, func(r prism.WorkRef) bool {
		if r.SlotID != q.After && (consensus == nil || !consensus.Has(r)) {
			out = append(out, r)
		}
		return len(out) < q.Limit
	})
	if q.Random >= 0 {
		rng := rand.New(rand.NewPCG(uint64(q.Random*(1<<53)), 0))
		rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	}
	return out, nil
}

// LapsedPipelines implements prism.Store. Memory has no lease index; it
// scans the pipelines, which a sweep every few seconds can afford.
func (s *Store) LapsedPipelines(ctx context.Context, now time.Time) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for id, p := range s.prism.pipelines {
		if l := p.NextLease(); !l.IsZero() && !l.After(now) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out, nil
}

// AddConsensus implements prism.Store.
func (s *Store) AddConsensus(ctx context.Context, claimID string, rec prism.ConsensusRecord) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.claims[claimID]; !ok {
		return slots.ErrClaimNotFound
	}
	if s.prism.consensus == nil {
		s.prism.consensus = map[string][]prism.ConsensusRecord{}
	}
	rec.CreatedAt = store.Milli(rec.CreatedAt)
	s.prism.consensus[claimID] = append(s.prism.consensus[claimID], rec.Clone())
	return nil
}

// ConsensusRecords implements prism.Store.
func (s *Store) ConsensusRecords(ctx context.Context, claimID string, limit int) ([]prism.ConsensusRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	recs := s.prism.consensus[claimID]
	out := make([]prism.ConsensusRecord, 0, max(min(limit, len(recs)), 0))
	for i := len(recs) - 1; i >= 0 && len(out) < limit; i-- {
		out = append(out, recs[i].Clone())
	}
	return out, nil
}
