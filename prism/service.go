package prism

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/internal/aggregate"
	"github.com/agorahq/agora/internal/ids"
	"github.com/agorahq/agora/internal/notify"
	"github.com/agorahq/agora/internal/sweep"
	"github.com/agorahq/agora/internal/text"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// Service runs pipelines over a Store. Every change applies a transition
// of the engine to a copy of the pipeline and saves it with
// compare-and-set, together with its effects: the store's atomic save is
// what makes each transition happen once.
//
// The Service remembers the last version of each pipeline it saved or was
// handed back by the store (a bounded cache, aggregate.Saver), and starts a
// change from it instead of reading: taking or finishing a stage slot of a
// pipeline whose last change this process made is one round trip, the
// save. A remembered pipeline may be stale when another process changed it
// since; compare-and-set then refuses the save and hands back the stored
// pipeline, which the next attempt starts from. A change the remembered
// pipeline refuses is tried again on the stored one before its error is
// returned, so a stale copy never turns a valid take or done into an
// error, nor lets an invalid one through. Once a change found the
// remembered pipeline stale, the next reads first (see
// aggregate.Saver.Change).
type Service struct {
	store     Store
	claims    slots.ClaimStore
	now       func() time.Time
	ids       ids.Gen
	lease     time.Duration
	notifier  store.Notifier
	pipelines *aggregate.Saver[Pipeline, Effects]
	takers    takers // TakeNextWork's crowd (takenext.go)
	obs       Observer
}

// Option configures a Service.
type Option func(*Service)

// WithClock sets the clock; the default is time.Now.
func WithClock(now func() time.Time) Option { return func(s *Service) { s.now = now } }

// WithLease sets how long a taken stage slot waits for its done before it
// re-opens (DefaultLease by default; 0 turns leases off).
func WithLease(d time.Duration) Option { return func(s *Service) { s.lease = d } }

// WithNotifier makes every change of a pipeline publish its claim's ID on
// slots.ClaimsTopic, the topic of slots.Service's claim changes, so a live
// view following one follows both. Announcements go out in the background
// off the path of a take or a done.
func WithNotifier(n store.Notifier) Option {
	return func(s *Service) { s.notifier = notify.ForService(n) }
}

// DefaultLease is how long a stage slot stays taken without a done.
const DefaultLease = 5 * time.Minute

// New returns a Service over st; claims is where claims live (the slots
// store of the same backend).
func New(st Store, claims slots.ClaimStore, opts ...Option) *Service {
	s := &Service{store: st, claims: claims, now: time.Now, lease: DefaultLease, notifier: notify.Local(), obs: nopObserver{}}
	for _, o := range opts {
		o(s)
	}
	s.ids.Now = s.now
	s.pipelines = aggregate.New[Pipeline, Effects](pipelineStore{st}, ErrVersionConflict)
	return s
}

// env is a transition's environment; a route looks its protocol up with
// ctx.
func (s *Service) env(ctx context.Context) env {
	return env{now: store.Milli(s.now()), ids: &s.ids, protocol: func(id string) (Protocol, error) { return s.Protocol(ctx, id) }}
}

// change applies fn to a copy of the claim's pipeline and saves it with
// fn's effects, with compare-and-set (aggregate.Saver.Change: from the
// remembered pipeline when there is one, retrying on the stored pipeline,
// fn's error returned only when the stored pipeline refuses it); once
// saved, the change is announced and observed.
func (s *Service) change(ctx context.Context, claimID string, fn func(p *Pipeline, e env) (Effects, error)) (Pipeline, error) {
	var from Pipeline // the saved change's start: its layer, status and flags
	p, err := s.pipelines.Change(ctx, claimID, func(p *Pipeline) (Effects, error) {
		from = Pipeline{CurrentLayer: p.CurrentLayer, Status: p.Status, Flags: p.Flags}
		e := s.env(ctx)
		fx, err := fn(p, e)
		p.UpdatedAt = e.now
		return fx, err
	})
	if err != nil {
		return p, err
	}
	slots.PublishClaimChange(ctx, s.notifier, p.ClaimID)
	s.observe(ctx, from, p)
	return p, nil
}

// observe tells the observer of the layer a saved change finished (a
// change finishes one at most) and the flags it raised: from is the pipeline it started from, to the one
// saved.
func (s *Service) observe(ctx context.Context, from, to Pipeline) {
	if to.CurrentLayer != from.CurrentLayer || to.Status == StatusComplete && from.Status != StatusComplete {
		s.obs.LayerAdvanced(ctx, to, from.CurrentLayer)
	}
	for _, f := range to.Flags[min(len(from.Flags), len(to.Flags)):] {
		s.obs.FlagRaised(ctx, f)
	}
}

// pipelineStore is the Service's Store as aggregate.Saver reads and saves
// pipelines.
type pipelineStore struct{ Store }

// Load reads the pipeline of a claim.
func (st pipelineStore) Load(ctx context.Context, claimID string) (Pipeline, error) {
	return st.GetPipeline(ctx, claimID)
}

// Save saves next and fx with compare-and-set (Store.UpdatePipeline).
func (st pipelineStore) Save(ctx context.Context, next Pipeline, fx Effects) (Pipeline, error) {
	return st.UpdatePipeline(ctx, next, fx)
}

// AggregateID returns p.ClaimID, the key aggregate.Saver remembers p by.
func (p Pipeline) AggregateID() string { return p.ClaimID }

// AggregateVersion returns p.Version, the version compare-and-set checks.
func (p Pipeline) AggregateVersion() int64 { return p.Version }

// WithVersion returns p at version v, as aggregate.Saver saves a change.
func (p Pipeline) WithVersion(v int64) Pipeline {
	p.Version = v
	return p
}

// RegisterProtocol validates and stores a protocol, replacing one with the
// same ID (running pipelines keep the protocol they started with). The
// built-in protocols (BuiltinIDs) cannot be replaced: registering one of
// their IDs is a conflict. A route may name a protocol registered later;
// until then, a pipeline routed to it fails its last done.
func (s *Service) RegisterProtocol(ctx context.Context, p Protocol) (err error) {
	ctx, done := s.obs.Call(ctx, "prism.RegisterProtocol")
	defer func() { done(err) }()
	if err := p.Validate(); err != nil {
		return err
	}
	if _, ok := Builtin(p.ID); ok {
		return store.Errorf(store.ErrConflict, "protocol_reserved", "%s is built in and cannot be replaced; register the protocol under another id", p.ID)
	}
	return s.store.PutProtocol(ctx, p)
}

// Protocol returns a protocol (Prism v1 for ""); a built-in one is seeded
// on first use.
func (s *Service) Protocol(ctx context.Context, id string) (_ Protocol, err error) {
	ctx, done := s.obs.Call(ctx, "prism.Protocol")
	defer func() { done(err) }()
	if id == "" {
		id = PrismV1ID
	}
	p, err := s.store.GetProtocol(ctx, id)
	if b, ok := Builtin(id); ok && errors.Is(err, ErrProtocolNotFound) {
		if err := s.store.PutProtocol(ctx, b); err != nil {
			return Protocol{}, err
		}
		return b, nil
	}
	return p, err
}

// Protocols lists the registered protocols, the built-in ones included.
func (s *Service) Protocols(ctx context.Context) (_ []Protocol, err error) {
	ctx, done := s.obs.Call(ctx, "prism.Protocols")
	defer func() { done(err) }()
	for _, id := range BuiltinIDs {
		if _, err := s.Protocol(ctx, id); err != nil {
			return nil, err
		}
	}
	return s.store.ListProtocols(ctx)
}

// ProtocolSummary is a protocol as the protocol routes show it: Agora's
// definition beside the original's summary of how often claims were
// created under its name. The names claims were created under that no one
// registered (slots.Claim.Protocol, kept as given) are summaries too.
type ProtocolSummary struct {
	// Protocol is the registered or built-in definition; for a name no one
	// registered, its ID and Name are the name and it has no layers.
	Protocol Protocol
	// Claims is how many claims were created under the name, LastUsedAt
	// the newest one's CreatedAt (zero when none was).
	Claims     int
	LastUsedAt time.Time
}

// MaxProtocolNames bounds how many names no one registered
// ProtocolSummaries lists: the most used ones.
const MaxProtocolNames = 1000

// ProtocolSummaries lists every registered protocol, the built-in ones
// included, and the names claims were created under that no one
// registered (the MaxProtocolNames most used), as the original's listing
// orders them: the most claims first, then the latest used, then by ID.
func (s *Service) ProtocolSummaries(ctx context.Context) (_ []ProtocolSummary, err error) {
	ctx, done := s.obs.Call(ctx, "prism.ProtocolSummaries")
	defer func() { done(err) }()
	registered, err := s.Protocols(ctx)
	if err != nil {
		return nil, err
	}
	limit := len(registered) + MaxProtocolNames
	uses, err := s.claims.ProtocolUses(ctx, slots.ProtocolUsesParams{Limit: limit})
	if err != nil {
		return nil, err
	}
	used := make(map[string]slots.ProtocolUse, len(uses))
	for _, u := range uses {
		used[u.Name] = u
	}
	out := make([]ProtocolSummary, 0, len(registered)+len(uses))
	for _, p := range registered {
		u, ok := used[p.ID]
		if !ok && len(uses) == limit { // the listing stopped before p's use, if it has one
			if u, err = s.protocolUse(ctx, p.ID); err != nil {
				return nil, err
			}
		}
		delete(used, p.ID)
		out = append(out, ProtocolSummary{Protocol: p, Claims: u.Claims, LastUsedAt: u.LastUsedAt})
	}
	names := 0
	for _, u := range uses {
		if _, ok := used[u.Name]; ok && names < MaxProtocolNames {
			out = append(out, ProtocolSummary{Protocol: Protocol{ID: u.Name, Name: u.Name}, Claims: u.Claims, LastUsedAt: u.LastUsedAt})
			names++
		}
	}
	slices.SortFunc(out, func(a, b ProtocolSummary) int {
		return slots.CompareProtocolUses(a.use(), b.use())
	})
	return out, nil
}

// ProtocolSummary returns one protocol's summary: a registered one's, or
// that of a name claims were created under; ErrProtocolNotFound for
// neither.
func (s *Service) ProtocolSummary(ctx context.Context, id string) (_ ProtocolSummary, err error) {
	ctx, done := s.obs.Call(ctx, "prism.ProtocolSummary")
	defer func() { done(err) }()
	if id == "" {
		return ProtocolSummary{}, ErrProtocolNotFound
	}
	p, err := s.Protocol(ctx, id)
	registered := err == nil
	if err != nil && !errors.Is(err, ErrProtocolNotFound) {
		return ProtocolSummary{}, err
	}
	u, err := s.protocolUse(ctx, id)
	if err != nil {
		return ProtocolSummary{}, err
	}
	sum := ProtocolSummary{Protocol: p, Claims: u.Claims, LastUsedAt: u.LastUsedAt}
	switch {
	case registered:
	case u.Claims > 0:
		sum.Protocol = Protocol{ID: id, Name: id}
	default:
		return ProtocolSummary{}, ErrProtocolNotFound
	}
	return sum, nil
}

// protocolUse is how often claims were created under the name: none when
// no claim was.
func (s *Service) protocolUse(ctx context.Context, name string) (slots.ProtocolUse, error) {
	uses, err := s.claims.ProtocolUses(ctx, slots.ProtocolUsesParams{Name: name})
	if err != nil || len(uses) == 0 {
		return slots.ProtocolUse{Name: name}, err
	}
	return uses[0], nil
}

// use is the summary as slots.CompareProtocolUses orders it.
func (p ProtocolSummary) use() slots.ProtocolUse {
	return slots.ProtocolUse{Name: p.Protocol.ID, Claims: p.Claims, LastUsedAt: p.LastUsedAt}
}

// NewClaim is the input of Service.CreateClaim: a claim and the protocol
// its pipeline runs.
type NewClaim struct {
	slots.NewClaim
	// Protocol is the ID of a registered or built-in protocol, trimmed;
	// empty or another name means Prism v1. The claim keeps the name as
	// given (slots.Claim.Protocol), at most slots.MaxProtocolLen
	// characters.
	Protocol string
}

// CreateClaim creates a claim and its pipeline under in.Protocol, the
// first layer open, in one atomic step of the store: the claim never
// stands without its pipeline, and a failure leaves neither. The claim is
// checked as slots.Service.CreateClaim checks it. A protocol no one
// registered runs Prism v1, as the original falls back to its default
// protocol: AOP's agents are told to send a protocol and may name any.
func (s *Service) CreateClaim(ctx context.Context, in NewClaim) (slots.Claim, Pipeline, error) {
	name, err := text.Trimmed("protocol", in.Protocol, false, slots.MaxProtocolLen)
	if err != nil {
		return slots.Claim{}, Pipeline{}, err
	}
	proto, err := s.Protocol(ctx, name)
	if errors.Is(err, ErrProtocolNotFound) {
		proto, err = s.Protocol(ctx, "")
	}
	if err != nil {
		return slots.Claim{}, Pipeline{}, err
	}
	c, err := in.NewClaim.Check()
	if err != nil {
		return slots.Claim{}, Pipeline{}, err
	}
	c.Protocol = name
	if c.Protocol == "" {
		c.Protocol = proto.ID
	}
	e := s.env(ctx)
	c.ID, c.CreatedAt, c.UpdatedAt = s.ids.New("claim"), e.now, e.now
	c.SetAuthor(ctx)
	p := newPipeline(c.ID, c.Domain, proto, e)
	p.CreatedAt, p.UpdatedAt = e.now, e.now
	if err := s.store.CreateClaimPipeline(ctx, c, p); err != nil {
		return slots.Claim{}, Pipeline{}, err
	}
	s.pipelines.Remember(p)
	slots.PublishClaimChange(ctx, s.notifier, c.ID)
	return c, p, nil
}

// Pipeline returns a claim's pipeline: ErrPipelineNotFound for a claim
// without one, the claims' not-found error (slots.ErrClaimNotFound) for no
// claim.
func (s *Service) Pipeline(ctx context.Context, claimID string) (_ Pipeline, err error) {
	ctx, done := s.obs.Call(ctx, "prism.Pipeline")
	defer func() { done(err) }()
	p, err := s.store.GetPipeline(ctx, claimID)
	if errors.Is(err, ErrPipelineNotFound) {
		// As the original: no claim is the claim's 404, before the
		// pipeline's.
		if _, cerr := s.claims.GetClaim(ctx, claimID); cerr != nil {
			return Pipeline{}, cerr
		}
	}
	return p, err
}

// PostConsensus stores a consensus record of the caller's key
// (identity.KeyFrom) for a claim, as the original's agents post one with
// the consensus:write scope, and returns it. It becomes the claim's latest
// record (Consensus) until a newer one is written, by an agent or by the
// claim's pipeline.
func (s *Service) PostConsensus(ctx context.Context, in NewConsensus) (_ ConsensusRecord, err error) {
	ctx, done := s.obs.Call(ctx, "prism.PostConsensus")
	defer func() { done(err) }()
	agent, err := identity.KeyFrom(ctx)
	if err != nil {
		return ConsensusRecord{}, err
	}
	rec, err := in.record()
	if err != nil {
		return ConsensusRecord{}, err
	}
	rec.ID, rec.CreatedAt = s.ids.New("consensus"), store.Milli(s.now())
	rec.Author = slots.Agent{KeyID: agent.ID, Name: agent.Name, AvatarURL: agent.AvatarURL}
	if err := s.store.AddConsensus(ctx, in.ClaimID, rec); err != nil {
		return ConsensusRecord{}, err
	}
	slots.PublishClaimChange(ctx, s.notifier, in.ClaimID)
	return rec, nil
}

// Consensus returns a claim's latest consensus record (see
// ConsensusHistory): ErrConsensusNotFound before there is one, the claims'
// not-found error for no claim.
func (s *Service) Consensus(ctx context.Context, claimID string) (ConsensusRecord, error) {
	recs, err := s.ConsensusHistory(ctx, claimID, 1)
	if err != nil {
		return ConsensusRecord{}, err
	}
	if len(recs) == 0 {
		return ConsensusRecord{}, ErrConsensusNotFound
	}
	return recs[0], nil
}

// ConsensusHistory returns up to limit of a claim's consensus records,
// newest first: those agents posted and its pipeline's own, if it has
// one. A limit below 1 is DefaultConsensusHistory, one above
// MaxConsensusHistory is that. No claim is the claims' not-found error.
func (s *Service) ConsensusHistory(ctx context.Context, claimID string, limit int) (_ []ConsensusRecord, err error) {
	ctx, done := s.obs.Call(ctx, "prism.ConsensusHistory")
	defer func() { done(err) }()
	switch {
	case limit < 1:
		limit = DefaultConsensusHistory
	case limit > MaxConsensusHistory:
		limit = MaxConsensusHistory
	}
	p, err := s.Pipeline(ctx, claimID)
	if err != nil && !errors.Is(err, ErrPipelineNotFound) {
		return nil, err
	}
	recs, err := s.store.ConsensusRecords(ctx, claimID, limit)
	if err != nil {
		return nil, err
	}
	if own, ok := p.ConsensusRecord(); ok {
		// Records of one millisecond keep the posted ones first: the
		// pipeline's wrote its record in that millisecond or before.
		i := 0
		for i < len(recs) && !recs[i].CreatedAt.Before(own.CreatedAt) {
			i++
		}
		recs = slices.Insert(recs, i, own)
	}
	return recs[:min(len(recs), limit)], nil
}

// Take gives a stage slot to the caller's key (identity.KeyFrom): exactly
// one of concurrent callers wins, and an agent holds at most one slot per
// layer of a claim.
func (s *Service) Take(ctx context.Context, claimID, slotID string) (_ StageSlot, _ Pipeline, err error) {
	ctx, done := s.obs.Call(ctx, "prism.Take")
	defer func() { done(err) }()
	agent, err := identity.KeyFrom(ctx)
	if err != nil {
		return StageSlot{}, Pipeline{}, err
	}
	var taken StageSlot
	p, err := s.change(ctx, claimID, func(p *Pipeline, e env) (Effects, error) {
		var lease time.Time
		if s.lease > 0 {
			lease = store.Milli(e.now.Add(s.lease))
		}
		var err error
		taken, err = p.take(slotID, slots.Agent{KeyID: agent.ID, Name: agent.Name, AvatarURL: agent.AvatarURL}, e.now, lease)
		return Effects{}, err
	})
	if errors.Is(err, ErrPipelineNotFound) {
		err = slots.ErrSlotNotFound
	}
	return taken, p, err
}

// Done records the caller's submission on its slot, credits it, and moves
// the pipeline on when the submission completes a phase. A signed
// submission keeps the signing key the caller's key had registered beside
// the signature.
func (s *Service) Done(ctx context.Context, claimID, slotID string, in DoneInput) (_ Pipeline, err error) {
	ctx, done := s.obs.Call(ctx, "prism.Done")
	defer func() { done(err) }()
	agent, err := identity.KeyFrom(ctx)
	if err != nil {
		return Pipeline{}, err
	}
	in.signingKey = agent.SigningKeyAddress
	p, err := s.change(ctx, claimID, func(p *Pipeline, e env) (Effects, error) {
		return p.done(slotID, agent.ID, in, e)
	})
	if errors.Is(err, ErrPipelineNotFound) {
		err = slots.ErrSlotNotFound
	}
	return p, err
}

// ResolveFlagParams is a reviewer's decision on an open flag of a claim's
// pipeline.
type ResolveFlagParams struct {
	ClaimID, FlagID string     // the claim and the open flag of its pipeline
	Action          FlagAction // FlagAdvance or FlagRetry
	Note            string     // optional, kept with the flag
}

// ResolveFlag applies the decision of the caller's key, the reviewer, to
// an open flag.
func (s *Service) ResolveFlag(ctx context.Context, in ResolveFlagParams) (_ Pipeline, err error) {
	ctx, done := s.obs.Call(ctx, "prism.ResolveFlag")
	defer func() { done(err) }()
	reviewer, err := identity.KeyFrom(ctx)
	if err != nil {
		return Pipeline{}, err
	}
	return s.change(ctx, in.ClaimID, func(p *Pipeline, e env) (Effects, error) {
		var fx Effects
		err := p.resolveFlag(in.FlagID, in.Action, in.Note, reviewer.ID, &fx, e)
		return fx, err
	})
}

// Sweep re-opens every stage slot whose lease lapsed and returns
// how many pipelines changed.
func (s *Service) Sweep(ctx context.Context) (_ int, err error) {
	ctx, done := s.obs.Call(ctx, "prism.Sweep")
	defer func() { done(err) }()
	ids, err := s.store.LapsedPipelines(ctx, store.Milli(s.now()))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		changed := false
		_, err := s.change(ctx, id, func(p *Pipeline, e env) (Effects, error) {
			changed = p.releaseLapsed(e.now)
			if !changed {
				return Effects{}, aggregate.ErrNothing
			}
			return Effects{}, nil
		})
		if err != nil && !errors.Is(err, aggregate.ErrNothing) {
			return n, err
		}
		if changed && err == nil {
			n++
		}
	}
	return n, nil
}

// ReleaseHeld re-opens every stage slot the caller's key has taken and not finished,
// as an agent asks after a failed run (POST /api/v1/slots/release-stale),
// and returns how many it re-opened. It finds them through the lease
// index, so with leases off (WithLease(0)) it finds none.
func (s *Service) ReleaseHeld(ctx context.Context) (_ int, err error) {
	ctx, done := s.obs.Call(ctx, "prism.ReleaseHeld")
	defer func() { done(err) }()
	agent, err := identity.KeyFrom(ctx)
	if err != nil {
		return 0, err
	}
	ids, err := s.store.LapsedPipelines(ctx, time.UnixMilli(math.MaxInt64)) // every pipeline with a leased slot
	if err != nil {
		return 0, err
	}
	total := 0
	for _, id := range ids {
		n := 0
		_, err := s.change(ctx, id, func(p *Pipeline, e env) (Effects, error) {
			if n = p.releaseHeld(agent.ID); n == 0 {
				return Effects{}, aggregate.ErrNothing
			}
			return Effects{}, nil
		})
		if err != nil && !errors.Is(err, aggregate.ErrNothing) && !errors.Is(err, ErrPipelineNotFound) {
			return total, err
		}
		if err == nil {
			total += n
		}
	}
	return total, nil
}

// RunSweeper calls Sweep every interval until ctx is done.
func (s *Service) RunSweeper(ctx context.Context, interval time.Duration, onErr func(error)) {
	sweep.Every(ctx, interval, func(ctx context.Context) error {
		_, err := s.Sweep(ctx)
		return err
	}, onErr)
}

// Work is what the work queue hands an agent.
type Work struct {
	Slot     StageSlot   // the open slot the agent may take
	Claim    slots.Claim // the claim the slot's pipeline belongs to
	Pipeline Pipeline    // the pipeline as read when the slot was found
}

// workCandidates is how many indexed slots NextWork reads at a time to
// find one the agent may take (it holds none in that layer).
const workCandidates = 32

// NextWork returns an open stage slot the caller's key may take: in the current
// phase of an active pipeline, matching q, in a layer where the agent holds
// no slot; the oldest, or with q.Strategy slots.StrategyRandom any eligible
// one. It returns slots.ErrNoJob when there is none, and store.ErrInvalid
// for a query no slot could match (see WorkQuery).
//
// It reads the work index workCandidates slots at a time, paging on past
// the slots of layers where the agent holds a slot, so a slot further on
// is found however many it passes over; those are the open slots of the
// layers the agent works in, so the pages stay few for an agent holding
// few seats.
func (s *Service) NextWork(ctx context.Context, q WorkQuery) (_ Work, err error) {
	ctx, done := s.obs.Call(ctx, "prism.NextWork")
	defer func() { done(err) }()
	q, err = q.pick()
	if err != nil {
		return Work{}, err
	}
	return s.nextWork(ctx, identity.FromContext(ctx).Key, q)
}

// pick checks q and sets what the store reads: Limit, and Random from
// Strategy (a fresh draw for slots.StrategyRandom, -1 for the oldest).
func (q WorkQuery) pick() (WorkQuery, error) {
	switch q.Phase {
	case "", PhaseWork, PhaseConsensus:
	default:
		return WorkQuery{}, store.Errorf(store.ErrInvalid, "invalid_type", "type must be work or consensus")
	}
	if q.Layer != nil && *q.Layer < 0 {
		return WorkQuery{}, store.Errorf(store.ErrInvalid, "invalid_layer", "layer must be 0 or more")
	}
	q.Limit = workCandidates
	switch q.Strategy {
	case "", slots.StrategyOldest:
		q.Random = -1
	case slots.StrategyRandom:
		q.Random = rand.Float64()
	default:
		return WorkQuery{}, store.Errorf(store.ErrInvalid, "invalid_strategy", "strategy must be oldest or random")
	}
	return q, nil
}

func (s *Service) nextWork(ctx context.Context, agent identity.Key, q WorkQuery) (Work, error) {
	switch {
	case q.Phase == PhaseConsensus && q.Role != "" && q.Role != RoleConsensus,
		q.Phase == PhaseWork && q.Role == RoleConsensus:
		return Work{}, slots.ErrNoJob // no slot has that role in that phase
	case q.Layer != nil && *q.Layer > MaxLayers:
		// No protocol has that layer; and a store need not hold the number
		// (PostgreSQL's integer column does not hold 10^12).
		return Work{}, slots.ErrNoJob
	case q.Phase == PhaseConsensus:
		q.Role = RoleConsensus
	}
	read := map[string]*Pipeline{} // each claim's pipeline, read once
	for {
		from := q.After
		refs, err := s.store.FindWork(ctx, q)
		if err != nil {
			return Work{}, err
		}
		for _, ref := range refs {
			q.After = max(q.After, ref.SlotID) // a random pick's page is shuffled
			p, ok := read[ref.ClaimID]
			if !ok {
				got, err := s.store.GetPipeline(ctx, ref.ClaimID)
				switch {
				case errors.Is(err, ErrPipelineNotFound):
				case err != nil:
					return Work{}, err
				default:
					p = &got
				}
				read[ref.ClaimID] = p
			}
			if p == nil {
				continue // gone since the index was read
			}
			if sl := p.workFor(ref.SlotID, agent.ID, q.Phase); sl != nil {
				c, err := s.claims.GetClaim(ctx, p.ClaimID)
				if err != nil {
					return Work{}, err
				}
				return Work{Slot: *sl, Claim: c, Pipeline: *p}, nil
			}
		}
		if len(refs) < q.Limit || q.After == from {
			return Work{}, slots.ErrNoJob // the index's end
		}
	}
}

// workFor returns the slot with ID id if the agent with key ID keyID may
// take it now — open, in the current phase (of phase, when set) of an
// active pipeline, in a layer where the agent holds no slot — else nil. An
// empty keyID holds nothing. The index that named the slot is a hint: the
// pipeline may have moved on since.
func (p *Pipeline) workFor(id, keyID string, phase Phase) *StageSlot {
	sl := p.slot(id)
	if sl == nil || p.Status != StatusActive || sl.Status != slots.StatusOpen || sl.Layer != p.CurrentLayer || sl.Phase != p.Phase ||
		phase != "" && sl.Phase != phase {
		return nil
	}
	for _, o := range p.Slots {
		if keyID != "" && o.Layer == sl.Layer && o.APIKeyID == keyID {
			return nil
		}
	}
	return sl
}
