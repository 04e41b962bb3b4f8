package identity

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/agorahq/agora/internal/batch"
	"github.com/agorahq/agora/internal/ids"
	"github.com/agorahq/agora/internal/text"
	"github.com/agorahq/agora/store"
)

// Service holds the rules of API keys and device logins over a Store and
// authenticates every API's callers. It is safe for concurrent use;
// several Services in several processes may share one backend.
type Service struct {
	store     Store
	now       func() time.Time
	ids       ids.Gen
	adminHash []byte
	scopes    []Scope         // the scopes a key may carry, in the order messages list them
	aliases   map[Scope]Scope // other names of scopes
	obs       Observer
	// lookups coalesces Authenticate's reads of keys (see New).
	lookups *batch.Batcher[string, keyLookup]
}

// keyLookup is one key ID's answer in a batch of lookups.
type keyLookup struct {
	key Key
	err error
}

// maxKeyLookups is the most key IDs one GetKeys call of a Service reads.
const maxKeyLookups = 256

// Option configures a Service.
type Option func(*Service)

// WithClock sets the clock the service reads; the default is time.Now.
func WithClock(now func() time.Time) Option {
	return func(s *Service) { s.now = now }
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

// WithScopes sets the scopes a key may carry — the scopes the domains the
// host serves declare, in the order an unknown scope's error lists them —
// and aliases, the other names a scope may be asked for by (the original's
// "claim:new" for slots' claim:create). Creating a key or starting a device
// login with any other scope is refused. ScopeKeysAdmin is always known
// (appended when scopes lacks it). Without this option a key may carry
// only ScopeKeysAdmin: identity imports no domain, so the host, which
// knows which domains it serves, lists their scopes (httpapi.Scopes lists
// every Agora domain's).
func WithScopes(scopes []Scope, aliases map[Scope]Scope) Option {
	return func(s *Service) {
		s.scopes = slices.Clone(scopes)
		if !slices.Contains(s.scopes, ScopeKeysAdmin) {
			s.scopes = append(s.scopes, ScopeKeysAdmin)
		}
		s.aliases = maps.Clone(aliases)
	}
}

// New returns a Service over st.
func New(st Store, opts ...Option) *Service {
	s := &Service{store: st, now: time.Now, scopes: Scopes(), obs: nopObserver{}}
	for _, o := range opts {
		o(s)
	}
	s.ids.Now = s.now
	// Every authenticated request reads its key. Those that come while
	// others' reads are in flight go together in the next GetKeys, one
	// statement or round trip for all (a lone request never waits), and
	// each still reads the key after it arrived, so a revocation anywhere
	// holds for every request that follows it.
	s.lookups = &batch.Batcher[string, keyLookup]{
		MaxBatch: maxKeyLookups,
		Limit:    batch.NewLimit(0, batch.Procs(st)),
		Run:      s.getKeys,
		Fail:     func(err error) keyLookup { return keyLookup{err: err} },
	}
	return s
}

// getKeys answers a batch of key lookups with one GetKeys.
func (s *Service) getKeys(ctx context.Context, ids []string) ([]keyLookup, error) {
	keys, err := s.store.GetKeys(ctx, ids)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]Key, len(keys))
	for _, k := range keys {
		byID[k.ID] = k
	}
	out := make([]keyLookup, len(ids))
	for i, id := range ids {
		k, ok := byID[id]
		if !ok {
			out[i].err = ErrKeyNotFound
		}
		out[i].key = k
	}
	return out, nil
}

// Store returns the store the service runs on.
func (s *Service) Store() Store { return s.store }

// Now returns the service clock's current time.
func (s *Service) Now() time.Time { return s.now() }

// clock is the clock's time as the store keeps it (store.Milli), so a
// time the service returns equals the one a later read returns.
func (s *Service) clock() time.Time { return store.Milli(s.now()) }

// Scopes returns the scopes a key may carry (WithScopes), in order.
func (s *Service) Scopes() []Scope { return slices.Clone(s.scopes) }

// Admin returns the principal of the admin key (WithAdminKey): it holds
// every scope the service knows. A host acting as itself, not for a key,
// puts it in the context: WithKey(ctx, svc.Admin()).
func (s *Service) Admin() Key { return Key{ID: AdminKeyID, Name: "admin", Scopes: s.Scopes()} }

// CreateKey creates an API key on behalf of the caller (FromContext) and
// returns it with its token, which is shown this once and never stored.
// The caller's key must hold ScopeKeysAdmin and every scope it grants: a
// key cannot mint a key stronger than itself (ErrForbidden).
func (s *Service) CreateKey(ctx context.Context, in NewKey) (_ Key, _ string, err error) {
	ctx, done := s.obs.Call(ctx, "identity.CreateKey")
	defer func() { done(err) }()
	by := FromContext(ctx).Key
	if !by.Has(ScopeKeysAdmin) {
		return Key{}, "", store.Errorf(store.ErrForbidden, "insufficient_scope", "creating keys needs the %s scope", ScopeKeysAdmin)
	}
	if err := s.validateNewKey(&in); err != nil {
		return Key{}, "", err
	}
	if err := mayGrant(by, in.Scopes); err != nil {
		return Key{}, "", err
	}
	k, token := s.newKey(in)
	if err := s.store.CreateKey(ctx, k); err != nil {
		return Key{}, "", err
	}
	return k, token, nil
}

// mayGrant refuses scopes that by does not hold itself.
func mayGrant(by Key, scopes []Scope) error {
	for _, sc := range scopes {
		if !by.Has(sc) {
			return store.Errorf(store.ErrForbidden, "insufficient_scope", "a key may grant only scopes it holds; this one lacks %s", sc)
		}
	}
	return nil
}

// newKey makes a key of in, validated, and its token: a new ID and secret,
// created now. Nothing is stored.
func (s *Service) newKey(in NewKey) (Key, string) {
	secret, hash := newSecret()
	k := Key{
		ID:        s.ids.New("key"),
		Name:      in.Name,
		AvatarURL: in.AvatarURL,
		Scopes:    in.Scopes,
		CreatedAt: s.clock(),
		Hash:      hash,
	}
	return k, tokenPrefix + k.ID + "." + secret
}

// Keys lists every key, revoked ones included, oldest first. The caller's
// key must hold ScopeKeysAdmin.
func (s *Service) Keys(ctx context.Context) (_ []Key, err error) {
	ctx, done := s.obs.Call(ctx, "identity.Keys")
	defer func() { done(err) }()
	if _, err := Require(ctx, ScopeKeysAdmin); err != nil {
		return nil, err
	}
	return s.store.ListKeys(ctx)
}

// RevokeKey revokes a key; its token stops authenticating at once. The
// caller's key must hold ScopeKeysAdmin.
func (s *Service) RevokeKey(ctx context.Context, id string) (err error) {
	ctx, done := s.obs.Call(ctx, "identity.RevokeKey")
	defer func() { done(err) }()
	if _, err := Require(ctx, ScopeKeysAdmin); err != nil {
		return err
	}
	return s.store.RevokeKey(ctx, id, s.clock())
}

// RegisterSigningKey records the address of the key the caller's agent
// signs its outputs with, as AOP's `aop setup` registers it (any address; a
// later one replaces it). The admin token has no key to record it on.
func (s *Service) RegisterSigningKey(ctx context.Context, address string) (err error) {
	ctx, done := s.obs.Call(ctx, "identity.RegisterSigningKey")
	defer func() { done(err) }()
	agent, err := KeyFrom(ctx)
	if err != nil {
		return err
	}
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

// Authenticate returns the key a bearer token belongs to. An empty token is
// ErrMissingToken; any other failure — malformed, unknown, wrong secret,
// revoked — is ErrUnauthenticated, so a caller learns nothing about which
// part was wrong.
func (s *Service) Authenticate(ctx context.Context, token string) (k Key, err error) {
	ctx, done := s.obs.Call(ctx, "identity.Authenticate")
	defer func() { done(err) }()
	if token == "" {
		return Key{}, ErrMissingToken
	}
	if s.adminHash != nil {
		h := sha256.Sum256([]byte(token))
		if subtle.ConstantTimeCompare(h[:], s.adminHash) == 1 {
			return s.Admin(), nil
		}
	}
	id, secret, ok := parseToken(token)
	if !ok {
		return Key{}, ErrUnauthenticated
	}
	r, err := s.lookups.Do(ctx, id)
	if err == nil {
		k, err = r.key, r.err
	}
	if errors.Is(err, store.ErrNotFound) {
		return Key{}, ErrUnauthenticated
	}
	if err != nil {
		return Key{}, err
	}
	if !secretMatches(secret, k.Hash) || !k.RevokedAt.IsZero() {
		return Key{}, ErrUnauthenticated
	}
	return k, nil
}
