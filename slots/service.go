package slots

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/internal/batch"
	"github.com/agorahq/agora/internal/ids"
	"github.com/agorahq/agora/internal/notify"
	"github.com/agorahq/agora/internal/sweep"
	"github.com/agorahq/agora/internal/text"
	"github.com/agorahq/agora/store"
)

// Service holds the rules of claims, comments, role slots and the ledger
// over a Store; who calls it is the identity.Caller of the context. It is safe for concurrent use; several Services in several processes
// may share one backend.
type Service struct {
	store     Store
	now       func() time.Time
	ids       ids.Gen
	lease     time.Duration
	notifier  store.Notifier
	batching  batching
	dones     *batch.Batcher[FinishParams, FinishResult]
	takes     *batch.Batcher[TakeNextParams, JobResult]
	doneTakes *batch.Batcher[FinishTakeParams, FinishTakeResult]
	crowd     spread
	takers    takers
	obs       Observer
}

// Option configures a Service.
type Option func(*Service)

// WithClock sets the clock the service reads; the default is time.Now.
func WithClock(now func() time.Time) Option {
	return func(s *Service) { s.now = now }
}

// WithLease makes a taken slot lapse when its agent has not called Done
// within ttl: another agent may then take it, and a late Done is refused with
// ErrSlotNotTaken. Zero (the default) means slots never lapse, as in the
// specification. Run Sweep (or RunSweeper) so lapsed slots show as
// open again in listings and the job queue.
func WithLease(ttl time.Duration) Option {
	return func(s *Service) { s.lease = ttl }
}

// WithNotifier makes every change of a claim — the claim itself, its
// comments, its role slots — publish the claim's ID on ClaimsTopic, so live
// views in every process sharing n follow it (see SubscribeClaims). Give
// prism.Service the same notifier: pipeline changes go to the same topic.
// The announcement goes out in the background: a take stays one round
// trip to the store. Without a notifier, changes are announced to this
// process's views only, which re-read every second for the rest.
func WithNotifier(n store.Notifier) Option {
	return func(s *Service) { s.notifier = notify.ForService(n) }
}

// ClaimsTopic carries a hint for every change of a claim, its comments, its
// role slots or its Prism pipeline. The payload is the claim's ID, or empty
// when several claims may have changed at once (lapsed leases re-opened).
const ClaimsTopic = "slots:claims"

// SubscribeClaims follows ClaimsTopic.
func (s *Service) SubscribeClaims(ctx context.Context) (_ *store.Subscription, err error) {
	ctx, done := s.obs.Call(ctx, "slots.SubscribeClaims")
	defer func() { done(err) }()
	return s.notifier.Subscribe(ctx, ClaimsTopic)
}

// PublishClaimChange publishes claimID on ClaimsTopic through n, when n is
// not nil. The change is already stored, so the hint outlives the caller's
// context; a lost hint only delays a live view until its next re-read.
func PublishClaimChange(ctx context.Context, n store.Notifier, claimID string) {
	if !notify.Quiet(n) {
		_ = n.Publish(context.WithoutCancel(ctx), ClaimsTopic, []byte(claimID))
	}
}

// New returns a Service over st.
func New(st Store, opts ...Option) *Service {
	s := &Service{store: st, now: time.Now, notifier: notify.Local(), obs: nopObserver{},
		batching: batching{takeWait: DefaultBatchWait, doneWait: DefaultBatchWait}}
	for _, o := range opts {
		o(s)
	}
	s.ids.Now = s.now
	s.initBatchers()
	return s
}

// Store returns the store the service runs on.
func (s *Service) Store() Store { return s.store }

// Now returns the service clock's current time.
func (s *Service) Now() time.Time { return s.now() }

// clock is the clock's time as the store keeps it (store.Milli), so a
// time the service returns equals the one a later read returns.
func (s *Service) clock() time.Time { return store.Milli(s.now()) }

// CreateClaim validates and stores a new claim.
func (s *Service) CreateClaim(ctx context.Context, in NewClaim) (_ Claim, err error) {
	ctx, done := s.obs.Call(ctx, "slots.CreateClaim")
	defer func() { done(err) }()
	c, err := in.Check()
	if err != nil {
		return Claim{}, err
	}
	c.ID = s.ids.New("claim")
	c.CreatedAt = s.clock()
	c.UpdatedAt = c.CreatedAt
	c.SetAuthor(ctx)
	if err := s.store.CreateClaim(ctx, c); err != nil {
		return Claim{}, err
	}
	PublishClaimChange(ctx, s.notifier, c.ID)
	return c, nil
}

// Check validates in and returns the claim it describes, trimmed, with
// DefaultDomain for an empty domain and its sources normalised; the
// service creating it sets ID and CreatedAt. Bad input is store.ErrInvalid.
func (in NewClaim) Check() (Claim, error) {
	c := Claim{Title: strings.TrimSpace(in.Title), Body: in.Body, Domain: strings.TrimSpace(in.Domain)}
	if err := text.Check("title", c.Title, true, MaxTitleLen); err != nil {
		return Claim{}, err
	}
	if err := text.Check("body", c.Body, false, MaxBodyLen); err != nil {
		return Claim{}, err
	}
	if err := text.Check("domain", c.Domain, false, MaxDomainLen); err != nil {
		return Claim{}, err
	}
	if c.Domain == "" {
		c.Domain = DefaultDomain
	}
	sources, err := normalizeSources(in.Sources)
	if err != nil {
		return Claim{}, err
	}
	c.Sources = sources
	return c, nil
}

// SetAuthor makes the caller's key (identity.FromContext), when it has
// one, the claim's author.
func (c *Claim) SetAuthor(ctx context.Context) {
	k := identity.FromContext(ctx).Key
	c.AuthorID, c.AuthorName = k.ID, k.Name
}

// Claim returns a claim or ErrClaimNotFound.
func (s *Service) Claim(ctx context.Context, id string) (_ Claim, err error) {
	ctx, done := s.obs.Call(ctx, "slots.Claim")
	defer func() { done(err) }()
	return s.store.GetClaim(ctx, id)
}

// Listing limits for Claims.
const (
	DefaultClaimsLimit = 20  // the original's
	MaxClaimsLimit     = 500 // the original's most, for every limit of its routes
)

// ClaimsQuery pages and filters Claims.
type ClaimsQuery struct {
	Limit  int    // page size: 0 means DefaultClaimsLimit, above MaxClaimsLimit is MaxClaimsLimit, negative is invalid_limit
	Cursor string // NextCursor of the previous page; empty for the first
	Domain string // when set, only claims of this domain
	// Protocol, when set, keeps only claims created under this protocol
	// (Claim.Protocol), as the original's protocolId filter does.
	Protocol string
	// Sort orders the claims as the original's listing does, in any
	// case: ClaimLatest (empty means it), newest first, page after page;
	// ClaimTop, the most commented first, and ClaimRandom, shuffled, each
	// among the newest max(Limit, DefaultClaimJobPool) claims, in one page
	// (Cursor is not read, NextCursor is empty).
	Sort ClaimStrategy
}

// Claims returns a page of claims, newest first unless q.Sort says
// otherwise, of q.Domain when it is set.
func (s *Service) Claims(ctx context.Context, q ClaimsQuery) (_ ClaimPage, err error) {
	ctx, done := s.obs.Call(ctx, "slots.Claims")
	defer func() { done(err) }()
	limit, cursor := q.Limit, q.Cursor
	if err := text.Check("domain", q.Domain, false, MaxDomainLen); err != nil {
		return ClaimPage{}, err
	}
	protocol, err := text.Trimmed("protocol", q.Protocol, false, MaxProtocolLen)
	if err != nil {
		return ClaimPage{}, err
	}
	switch {
	case limit < 0:
		return ClaimPage{}, store.Errorf(store.ErrInvalid, "invalid_limit", "limit must be 1 or more")
	case limit == 0:
		limit = DefaultClaimsLimit
	}
	limit = min(limit, MaxClaimsLimit)
	switch sort := ClaimStrategy(strings.ToLower(string(q.Sort))); sort {
	case "", ClaimLatest:
	case ClaimTop, ClaimRandom:
		order := sort // a random page shuffles the newest
		if sort == ClaimRandom {
			order = ClaimLatest
		}
		items, err := s.store.ListClaims(ctx, ListClaimsParams{Limit: max(limit, DefaultClaimJobPool), Domain: q.Domain, Protocol: protocol, Order: order})
		if err != nil {
			return ClaimPage{}, err
		}
		if sort == ClaimRandom {
			rand.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
		}
		return ClaimPage{Items: items[:min(len(items), limit)]}, nil
	default:
		return ClaimPage{}, store.Errorf(store.ErrInvalid, "invalid_sort", "sort must be latest, top or random")
	}
	items, err := s.store.ListClaims(ctx, ListClaimsParams{Limit: limit + 1, Before: cursor, Domain: q.Domain, Protocol: protocol})
	if err != nil {
		return ClaimPage{}, err
	}
	page := ClaimPage{Items: items}
	if len(items) > limit {
		page.Items = items[:limit]
		page.NextCursor = items[limit-1].ID
	}
	return page, nil
}

// AddComment posts a comment on a claim as the caller's key
// (identity.KeyFrom).
func (s *Service) AddComment(ctx context.Context, in NewComment) (_ Comment, err error) {
	ctx, done := s.obs.Call(ctx, "slots.AddComment")
	defer func() { done(err) }()
	author, err := identity.KeyFrom(ctx)
	if err != nil {
		return Comment{}, err
	}
	t, err := ParseCommentType(in.CommentType)
	if err != nil {
		return Comment{}, err
	}
	if err := text.Check("body", in.Body, true, MaxCommentLen); err != nil {
		return Comment{}, err
	}
	c := Comment{
		ID:          s.ids.New("comment"),
		ClaimID:     in.ClaimID,
		Body:        in.Body,
		CommentType: t,
		AuthorID:    author.ID,
		AgentName:   author.Name,
		ParentID:    in.ParentID,
		CreatedAt:   s.clock(),
	}
	if err := s.store.AddComment(ctx, c); err != nil {
		return Comment{}, err
	}
	PublishClaimChange(ctx, s.notifier, c.ClaimID)
	return c, nil
}

// The orders of CommentsParams.Sort, the original's.
const (
	// CommentsTop is the original's default: most votes, then most
	// replies, then newest, among the claim's oldest MaxCommentsLimit
	// comments. Agora's comments have no votes, so it lists the most
	// replied to among them first, then the newest.
	CommentsTop = "top"
	CommentsNew = "new" // newest first
	CommentsOld = "old" // oldest first
)

// The bounds of CommentsParams.Limit, the original's.
const (
	DefaultCommentsLimit = 50
	MaxCommentsLimit     = 500
)

// CommentsParams says which of a claim's comments Comments lists.
type CommentsParams struct {
	// Sort is CommentsTop (empty means it), CommentsNew or CommentsOld,
	// any case; another value is store.ErrInvalid invalid_sort.
	Sort string
	// Limit is the most comments listed: 0 means DefaultCommentsLimit,
	// above MaxCommentsLimit is MaxCommentsLimit, negative is
	// store.ErrInvalid invalid_limit.
	Limit int
}

// ListCommentsParams is the input of ClaimStore.ListComments: the window
// of a claim's comments it reads.
type ListCommentsParams struct {
	// Limit is the most comments read.
	Limit int
	// Newest reads the claim's newest Limit comments; false, its oldest.
	Newest bool
}

// Comments lists a claim's comments in p's order, at most p.Limit of them,
// as the original's GET /claims/{id}/comments does; ErrClaimNotFound for
// no claim. It reads only the comments its order needs (CommentsTop's
// window is the original's); CommentsNew lists the newest, where the
// original's lists its oldest, newest first.
func (s *Service) Comments(ctx context.Context, claimID string, p CommentsParams) (_ []Comment, err error) {
	ctx, done := s.obs.Call(ctx, "slots.Comments")
	defer func() { done(err) }()
	sort := strings.ToLower(p.Sort)
	switch sort {
	case "", CommentsTop, CommentsNew, CommentsOld:
	default:
		return nil, store.Errorf(store.ErrInvalid, "invalid_sort", "sort must be top, new or old")
	}
	switch {
	case p.Limit < 0:
		return nil, store.Errorf(store.ErrInvalid, "invalid_limit", "limit must be 1 or more")
	case p.Limit == 0:
		p.Limit = DefaultCommentsLimit
	}
	limit := min(p.Limit, MaxCommentsLimit)
	window := ListCommentsParams{Limit: limit, Newest: sort == CommentsNew}
	if sort != CommentsOld && sort != CommentsNew {
		window.Limit = MaxCommentsLimit
	}
	cs, err := s.store.ListComments(ctx, claimID, window)
	if err != nil {
		return nil, err
	}
	if sort != CommentsOld {
		slices.Reverse(cs) // the store lists oldest first
	}
	if sort != CommentsOld && sort != CommentsNew {
		replies := map[string]int{}
		for _, c := range cs {
			if c.ParentID != "" {
				replies[c.ParentID]++
			}
		}
		slices.SortStableFunc(cs, func(a, b Comment) int { return replies[b.ID] - replies[a.ID] })
	}
	return cs[:min(len(cs), limit)], nil
}

// Balance returns what the key has been credited.
func (s *Service) Balance(ctx context.Context, keyID string) (_ int64, err error) {
	ctx, done := s.obs.Call(ctx, "slots.Balance")
	defer func() { done(err) }()
	return s.store.Balance(ctx, keyID)
}

// ValidateRoles checks a role-slot configuration as docs/slots.md requires:
// valid roles, counts of at least 1, 1 to MaxSlotsPerConfigure slots in all.
// It returns the total.
func ValidateRoles(roles []RoleCount) (int, error) {
	total := 0
	for _, rc := range roles {
		if !rc.Role.Valid() {
			return 0, store.Errorf(store.ErrInvalid, "invalid_role", "invalid role %q; roles are questioner, critic, supporter, counter, contributor, defender, answerer", rc.Role)
		}
		if rc.Count < 1 {
			return 0, store.Errorf(store.ErrInvalid, "invalid_count", "count for role %q must be an integer of at least 1", rc.Role)
		}
		total += rc.Count
		if total > MaxSlotsPerConfigure {
			return 0, store.Errorf(store.ErrInvalid, "too_many_slots", "at most %d slots may be configured in total", MaxSlotsPerConfigure)
		}
	}
	if total < 1 {
		return 0, store.Errorf(store.ErrInvalid, "no_slots", "at least 1 slot is required")
	}
	return total, nil
}

// ConfigureSlots replaces the claim's open slots with the given roles and
// returns how many slots it created. Taken and done slots are kept.
func (s *Service) ConfigureSlots(ctx context.Context, claimID string, roles []RoleCount) (_ int, err error) {
	ctx, done := s.obs.Call(ctx, "slots.ConfigureSlots")
	defer func() { done(err) }()
	total, err := ValidateRoles(roles)
	if err != nil {
		return 0, err
	}
	now := s.clock()
	slots := make([]Slot, 0, total)
	for _, rc := range roles {
		for range rc.Count {
			slots = append(slots, Slot{ID: s.ids.New("slot"), ClaimID: claimID, Role: rc.Role, Status: StatusOpen, CreatedAt: now})
		}
	}
	if err := s.store.ReplaceOpenSlots(ctx, claimID, slots); err != nil {
		return 0, err
	}
	PublishClaimChange(ctx, s.notifier, claimID)
	return total, nil
}

// Slots lists a claim's slots in creation order.
func (s *Service) Slots(ctx context.Context, claimID string) (_ []Slot, err error) {
	ctx, done := s.obs.Call(ctx, "slots.Slots")
	defer func() { done(err) }()
	return s.store.ListSlots(ctx, claimID)
}

// NextJob returns an eligible open slot with its claim and comments, or
// ErrNoJob. When a key calls (identity.FromContext), it only offers slots of
// claims where that key holds no slot, so an agent is never sent back to a claim where Take
// would refuse it with ErrSlotHeld. With the oldest strategy, callers
// asking at the same time are spread over the oldest eligible slots, one
// each as far as there are enough (see MaxSpread); a caller alone gets the
// oldest.
func (s *Service) NextJob(ctx context.Context, q JobQuery) (_ Job, err error) {
	ctx, done := s.obs.Call(ctx, "slots.NextJob")
	defer func() { done(err) }()
	p, err := nextSlotParams(q, identity.FromContext(ctx).Key.ID)
	if err != nil {
		return Job{}, err
	}
	if p.Random < 0 {
		p.Skip = s.crowd.enter()
		defer s.crowd.leave()
	}
	return s.store.NextOpenSlot(ctx, p)
}

// Take gives the slot to the caller's key (identity.KeyFrom): exactly one
// of many concurrent callers wins.
func (s *Service) Take(ctx context.Context, claimID, slotID string) (_ Slot, err error) {
	ctx, done := s.obs.Call(ctx, "slots.Take")
	defer func() { done(err) }()
	agent, err := identity.KeyFrom(ctx)
	if err != nil {
		return Slot{}, err
	}
	p := s.takeParams(agent)
	p.ClaimID, p.SlotID = claimID, slotID
	slot, err := s.store.TakeSlot(ctx, p)
	if err == nil {
		PublishClaimChange(ctx, s.notifier, claimID)
	}
	return slot, err
}

// Done marks the caller's slot done and credits RewardRoleSlot to its
// key, once.
func (s *Service) Done(ctx context.Context, claimID, slotID string) (_ Slot, err error) {
	ctx, done := s.obs.Call(ctx, "slots.Done")
	defer func() { done(err) }()
	agent, err := identity.KeyFrom(ctx)
	if err != nil {
		return Slot{}, err
	}
	p := FinishParams{ClaimID: claimID, SlotID: slotID, KeyID: agent.ID, Now: s.clock(), Credit: RewardRoleSlot}
	r, err := s.dones.Do(ctx, p)
	slot := r.Slot
	if err == nil {
		err = r.Err
	}
	if err == nil {
		PublishClaimChange(ctx, s.notifier, claimID)
	}
	return slot, err
}

// Sweep re-opens slots whose lease lapsed and returns how many.
func (s *Service) Sweep(ctx context.Context) (_ int, err error) {
	ctx, done := s.obs.Call(ctx, "slots.Sweep")
	defer func() { done(err) }()
	n, err := s.store.ReleaseExpiredSlots(ctx, s.clock())
	if n > 0 {
		PublishClaimChange(ctx, s.notifier, "")
	}
	return n, err
}

// Lease is the lease of WithLease: zero when slots never lapse, and
// then RunSweeper has nothing to re-open.
func (s *Service) Lease() time.Duration { return s.lease }

// RunSweeper calls Sweep every interval until ctx is done. Errors
// are passed to onErr when it is not nil. Several sweepers in several
// processes may run at once: each slot is re-opened once.
func (s *Service) RunSweeper(ctx context.Context, interval time.Duration, onErr func(error)) {
	sweep.Every(ctx, interval, func(ctx context.Context) error {
		_, err := s.Sweep(ctx)
		return err
	}, onErr)
}
