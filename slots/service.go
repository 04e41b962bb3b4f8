package slots

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/agorahq/agora/internal/ids"
	"github.com/agorahq/agora/internal/notify"
	"github.com/agorahq/agora/internal/sweep"
	"github.com/agorahq/agora/internal/text"
	"github.com/agorahq/agora/store"
)

// Service holds the rules of claims, comments, keys and role slots over a
// Store. It is safe for concurrent use; several Services in several processes
// may share one backend.
type Service struct {
	store     Store
	now       func() time.Time
	ids       ids.Gen
	lease     time.Duration
	adminHash []byte
	notifier  store.Notifier
	batching  batching
	dones     *batcher[FinishParams, FinishResult]
	takes     *batcher[TakeNextParams, JobResult]
	doneTakes *batcher[FinishTakeParams, FinishTakeResult]
	crowd     spread
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

// WithAdminKey makes token authenticate as the admin principal
// (ID AdminKeyID, every scope). Only its SHA-256 is kept.
func WithAdminKey(token string) Option {
	return func(s *Service) {
		if token == "" {
			s.adminHash = nil
			return
		}
		h := sha256.Sum256([]byte(token))
		s.adminHash = h[:]
	}
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
func (s *Service) SubscribeClaims(ctx context.Context) (*store.Subscription, error) {
	ctx, done := s.obs.Call(ctx, "slots.SubscribeClaims")
	defer done()
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

func (s *Service) nowMs() int64 { return s.now().UnixMilli() }

// CreateClaim validates and stores a new claim.
func (s *Service) CreateClaim(ctx context.Context, in NewClaim) (Claim, error) {
	ctx, done := s.obs.Call(ctx, "slots.CreateClaim")
	defer done()
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
	c.ID = s.ids.New("claim")
	c.CreatedAt = s.nowMs()
	if err := s.store.CreateClaim(ctx, c); err != nil {
		return Claim{}, err
	}
	PublishClaimChange(ctx, s.notifier, c.ID)
	return c, nil
}

// Claim returns a claim or ErrClaimNotFound.
func (s *Service) Claim(ctx context.Context, id string) (Claim, error) {
	ctx, done := s.obs.Call(ctx, "slots.Claim")
	defer done()
	return s.store.GetClaim(ctx, id)
}

// Listing limits for Claims.
const (
	DefaultClaimsLimit = 50
	MaxClaimsLimit     = 200
)

// Claims lists claims newest first. A limit of 0 means DefaultClaimsLimit;
// cursor is a previous page's NextCursor.
func (s *Service) Claims(ctx context.Context, limit int, cursor string) (ClaimPage, error) {
	ctx, done := s.obs.Call(ctx, "slots.Claims")
	defer done()
	return s.ListClaims(ctx, ClaimsQuery{Limit: limit, Cursor: cursor})
}

// ClaimsQuery pages and filters ListClaims.
type ClaimsQuery struct {
	Limit  int    // page size, 1 to MaxClaimsLimit; 0 means DefaultClaimsLimit
	Cursor string // NextCursor of the previous page; empty for the first
	Domain string // when set, only claims of this domain
}

// ListClaims is Claims filtered by q.Domain: a page of the claims of one
// domain, newest first.
func (s *Service) ListClaims(ctx context.Context, q ClaimsQuery) (ClaimPage, error) {
	ctx, done := s.obs.Call(ctx, "slots.ListClaims")
	defer done()
	limit, cursor := q.Limit, q.Cursor
	if err := text.Check("domain", q.Domain, false, MaxDomainLen); err != nil {
		return ClaimPage{}, err
	}
	if limit == 0 {
		limit = DefaultClaimsLimit
	}
	if limit < 1 || limit > MaxClaimsLimit {
		return ClaimPage{}, store.Errorf(store.ErrInvalid, "invalid_limit", "limit must be between 1 and %d", MaxClaimsLimit)
	}
	items, err := s.store.ListClaims(ctx, ListClaimsParams{Limit: limit + 1, Before: cursor, Domain: q.Domain})
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

// AddComment posts a comment on a claim as author.
func (s *Service) AddComment(ctx context.Context, author Key, in NewComment) (Comment, error) {
	ctx, done := s.obs.Call(ctx, "slots.AddComment")
	defer done()
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
		CreatedAt:   s.nowMs(),
	}
	if err := s.store.AddComment(ctx, c); err != nil {
		return Comment{}, err
	}
	PublishClaimChange(ctx, s.notifier, c.ClaimID)
	return c, nil
}

// Comments lists a claim's comments, oldest first.
func (s *Service) Comments(ctx context.Context, claimID string) ([]Comment, error) {
	ctx, done := s.obs.Call(ctx, "slots.Comments")
	defer done()
	return s.store.ListComments(ctx, claimID)
}

// CreateKey creates an API key on behalf of by and returns it with its
// token, which is shown this once and never stored. by must hold
// ScopeKeysAdmin and every scope it grants: a key cannot mint a key
// stronger than itself (ErrForbidden). A host's own Go code passes Admin().
func (s *Service) CreateKey(ctx context.Context, by Key, in NewKey) (Key, string, error) {
	ctx, done := s.obs.Call(ctx, "slots.CreateKey")
	defer done()
	if !by.Has(ScopeKeysAdmin) {
		return Key{}, "", store.Errorf(store.ErrForbidden, "insufficient_scope", "creating keys needs the %s scope", ScopeKeysAdmin)
	}
	if err := validateNewKey(&in); err != nil {
		return Key{}, "", err
	}
	if err := mayGrant(by, in.Scopes); err != nil {
		return Key{}, "", err
	}
	if in.Name == Admin().Name {
		return Key{}, "", ErrKeyNameTaken // the admin key's
	}
	return s.createKey(ctx, in)
}

// Admin returns the principal of the admin key (WithAdminKey): it holds
// every scope. A host acting as itself, not for a key, passes it.
func Admin() Key { return Key{ID: AdminKeyID, Name: "admin", Scopes: slices.Clone(AllScopes)} }

// mayGrant refuses scopes that by does not hold itself.
func mayGrant(by Key, scopes []Scope) error {
	for _, sc := range scopes {
		if !by.Has(sc) {
			return store.Errorf(store.ErrForbidden, "insufficient_scope", "a key may grant only scopes it holds; this one lacks %s", sc)
		}
	}
	return nil
}

// createKey stores a validated key whose scopes were granted.
func (s *Service) createKey(ctx context.Context, in NewKey) (Key, string, error) {
	secret, hash := newSecret()
	k := Key{
		ID:        s.ids.New("key"),
		Name:      in.Name,
		AvatarURL: in.AvatarURL,
		Scopes:    in.Scopes,
		CreatedAt: s.nowMs(),
		Hash:      hash,
	}
	if err := s.store.CreateKey(ctx, k); err != nil {
		return Key{}, "", err
	}
	return k, tokenPrefix + k.ID + "." + secret, nil
}

// Keys lists every key, revoked ones included, oldest first.
func (s *Service) Keys(ctx context.Context) ([]Key, error) {
	ctx, done := s.obs.Call(ctx, "slots.Keys")
	defer done()
	return s.store.ListKeys(ctx)
}

// RevokeKey revokes a key; its token stops authenticating at once.
func (s *Service) RevokeKey(ctx context.Context, id string) error {
	ctx, done := s.obs.Call(ctx, "slots.RevokeKey")
	defer done()
	return s.store.RevokeKey(ctx, id, s.nowMs())
}

// RegisterSigningKey records the address of the key agent signs its
// outputs with, as AOP's `aop setup` registers it (any address; a later one
// replaces it). The admin token has no key to record it on.
func (s *Service) RegisterSigningKey(ctx context.Context, agent Key, address string) error {
	ctx, done := s.obs.Call(ctx, "slots.RegisterSigningKey")
	defer done()
	address = strings.TrimSpace(address)
	if address == "" {
		return store.Errorf(store.ErrInvalid, "invalid_payload", "signingKeyAddress is required")
	}
	if err := text.Check("signingKeyAddress", address, true, MaxSigningKeyAddressLen); err != nil {
		return err
	}
	if agent.ID == AdminKeyID {
		return store.Errorf(store.ErrInvalid, "invalid_key", "the admin token has no key to register a signing key on; use an agent's API key")
	}
	return s.store.SetSigningKey(ctx, agent.ID, address)
}

var errBadToken = store.Errorf(store.ErrUnauthorized, "invalid_api_key", "missing, unknown or revoked API key")

// Authenticate returns the key a bearer token belongs to. Any failure — empty,
// malformed, unknown, wrong secret, revoked — is the same store.ErrUnauthorized
// error, so a caller learns nothing about which part was wrong.
func (s *Service) Authenticate(ctx context.Context, token string) (Key, error) {
	ctx, done := s.obs.Call(ctx, "slots.Authenticate")
	defer done()
	if token == "" {
		return Key{}, errBadToken
	}
	if s.adminHash != nil {
		h := sha256.Sum256([]byte(token))
		if subtle.ConstantTimeCompare(h[:], s.adminHash) == 1 {
			return Admin(), nil
		}
	}
	id, secret, ok := parseToken(token)
	if !ok {
		return Key{}, errBadToken
	}
	k, err := s.store.GetKey(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return Key{}, errBadToken
	}
	if err != nil {
		return Key{}, err
	}
	if !secretMatches(secret, k.Hash) || k.RevokedAt != 0 {
		return Key{}, errBadToken
	}
	return k, nil
}

// Balance returns what the key has been credited.
func (s *Service) Balance(ctx context.Context, keyID string) (int64, error) {
	ctx, done := s.obs.Call(ctx, "slots.Balance")
	defer done()
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
func (s *Service) ConfigureSlots(ctx context.Context, claimID string, roles []RoleCount) (int, error) {
	ctx, done := s.obs.Call(ctx, "slots.ConfigureSlots")
	defer done()
	total, err := ValidateRoles(roles)
	if err != nil {
		return 0, err
	}
	now := s.nowMs()
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
func (s *Service) Slots(ctx context.Context, claimID string) ([]Slot, error) {
	ctx, done := s.obs.Call(ctx, "slots.Slots")
	defer done()
	return s.store.ListSlots(ctx, claimID)
}

// NextJob returns an eligible open slot with its claim and comments, or
// ErrNoJob. With q.AgentKeyID set, it only offers slots of claims where that
// agent holds no slot, so an agent is never sent back to a claim where Take
// would refuse it with ErrSlotHeld. With the oldest strategy, callers
// asking at the same time are spread over the oldest eligible slots, one
// each as far as there are enough (see MaxSpread); a caller alone gets the
// oldest.
func (s *Service) NextJob(ctx context.Context, q JobQuery) (Job, error) {
	ctx, done := s.obs.Call(ctx, "slots.NextJob")
	defer done()
	p, err := nextSlotParams(q)
	if err != nil {
		return Job{}, err
	}
	if p.Random < 0 {
		p.Skip = s.crowd.enter()
		defer s.crowd.leave()
	}
	return s.store.NextOpenSlot(ctx, p)
}

// Take gives the slot to agent: exactly one of many concurrent callers wins.
func (s *Service) Take(ctx context.Context, agent Key, claimID, slotID string) (Slot, error) {
	ctx, done := s.obs.Call(ctx, "slots.Take")
	defer done()
	p := s.takeParams(agent)
	p.ClaimID, p.SlotID = claimID, slotID
	slot, err := s.store.TakeSlot(ctx, p)
	if err == nil {
		PublishClaimChange(ctx, s.notifier, claimID)
	}
	return slot, err
}

// Done marks the agent's slot done and credits RewardRoleSlot to it, once.
func (s *Service) Done(ctx context.Context, agent Key, claimID, slotID string) (Slot, error) {
	ctx, done := s.obs.Call(ctx, "slots.Done")
	defer done()
	p := FinishParams{ClaimID: claimID, SlotID: slotID, KeyID: agent.ID, Now: s.nowMs(), Credit: RewardRoleSlot}
	r, err := s.dones.do(ctx, p)
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
func (s *Service) Sweep(ctx context.Context) (int, error) {
	ctx, done := s.obs.Call(ctx, "slots.Sweep")
	defer done()
	n, err := s.store.ReleaseExpiredSlots(ctx, s.nowMs())
	if n > 0 {
		PublishClaimChange(ctx, s.notifier, "")
	}
	return n, err
}

// RunSweeper calls Sweep every interval until ctx is done. Errors
// are passed to onErr when it is not nil. Several sweepers in several
// processes may run at once: each slot is re-opened once.
func (s *Service) RunSweeper(ctx context.Context, interval time.Duration, onErr func(error)) {
	sweep.Every(ctx, interval, func(ctx context.Context) error {
		_, err := s.Sweep(ctx)
		return err
	}, onErr)
}
