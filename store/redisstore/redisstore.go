package redisstore

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/agorahq/agora/agentchat"
	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// DefaultPrefix is the key prefix of a store created without WithPrefix.
const DefaultPrefix = "agora"

// Store implements every domain's store interface on Redis. It holds no
// state of its own besides the client, so any number of Stores in any
// number of processes may share one server and prefix.
type Store struct {
	client redis.UniversalClient
	// ns starts every key: "{prefix}:".
	ns     string
	events *notifier
}

var (
	_ slots.Store    = (*Store)(nil)
	_ identity.Store = (*Store)(nil)
	_ store.Parallel = (*Store)(nil)
)

// Parallelism implements store.Parallel: Redis runs one command or script
// at a time, and every key of a store shares one hash tag, so one server
// (one Cluster node) runs all its calls.
func (s *Store) Parallelism() int { return 1 }

// Option configures a Store.
type Option func(*Store)

// WithPrefix sets the hash tag that starts every key, so several stores
// (tenants, tests) can share one server without seeing each other's data.
// An empty prefix is ignored: "{}" is no hash tag at all, and Cluster would
// then scatter the store's keys over slots where its scripts cannot run.
func WithPrefix(prefix string) Option {
	return func(s *Store) {
		if prefix != "" {
			s.ns = "{" + prefix + "}:"
		}
	}
}

// New returns a store on client. The caller keeps ownership of the client
// and closes it.
func New(client redis.UniversalClient, opts ...Option) *Store {
	s := &Store{client: client, ns: "{" + DefaultPrefix + "}:", events: &notifier{}}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Client returns the client the store runs on, so other Redis-backed
// features of the same process (rate limiting, pub/sub) can share its pool.
func (s *Store) Client() redis.UniversalClient { return s.client }

func (s *Store) key(parts ...string) string { return s.ns + strings.Join(parts, ":") }

func (s *Store) claimsKey() string { return s.key("claims") }

// domainClaimsKey is the index of one domain's claims; lib.lua's
// set_claim_domain spells it out too when it moves a claim to its new
// domain.
func (s *Store) domainClaimsKey(domain string) string { return s.key("claims", "domain", domain) }

// protocolClaimsKey is the index of the claims created under one protocol
// (slots.Claim.Protocol); a claim without one is in none.
func (s *Store) protocolClaimsKey(protocol string) string {
	return s.key("claims", "protocol", protocol)
}

// protocolsKey indexes the names claims were created under (score 0);
// protocolsIndexedKey marks it as holding those of claims stored before it.
func (s *Store) protocolsKey() string        { return s.key("claims", "protocols") }
func (s *Store) protocolsIndexedKey() string { return s.key("claims", "protocols", "indexed") }

// protocolRankKey ranks the names claims were created under, score 0, and
// protocolRanksKey maps each name to its member there (rank_protocol in
// lua/lib.lua); protocolsRankedKey marks the ranking as holding the names
// of claims stored before it.
func (s *Store) protocolRankKey() string    { return s.key("claims", "protocols", "rank") }
func (s *Store) protocolRanksKey() string   { return s.key("claims", "protocols", "ranks") }
func (s *Store) protocolsRankedKey() string { return s.key("claims", "protocols", "ranked") }

func (s *Store) leasesKey() string   { return s.key("leases") }
func (s *Store) keysKey() string     { return s.key("keys") }
func (s *Store) keyNamesKey() string { return s.key("keynames") }
func (s *Store) balancesKey() string { return s.key("balances") }

// Per-record keys put the kind before the ID ("comments:<claim>", not
// "claim:<claim>:comments"): IDs reach the store from URLs, and an ID
// containing ':' must not name another record's key.
func (s *Store) claimKey(id string) string    { return s.key("claim", id) }
func (s *Store) commentsKey(id string) string { return s.key("comments", id) }

// commentIDsKey is the set of a claim's comment IDs, which a reply's parent
// is checked against.
func (s *Store) commentIDsKey(id string) string { return s.key("commentids", id) }
func (s *Store) slotsKey(id string) string      { return s.key("slots", id) }
func (s *Store) holdersKey(id string) string    { return s.key("holders", id) }
func (s *Store) slotKey(id string) string       { return s.key("slot", id) }
func (s *Store) keyKey(id string) string        { return s.key("key", id) }

// calibrationsKey is the list of a claim's calibrations, oldest first.
func (s *Store) calibrationsKey(id string) string { return s.key("calibrations", id) }

// queueKey names the job-queue index for a filter; lib.lua's queue_keys
// names the same four indexes when slots open and close.
func (s *Store) queueKey(role slots.Role, domain string) string {
	switch {
	case role == "" && domain == "":
		return s.key("q", "all")
	case domain == "":
		return s.key("q", "role", string(role))
	case role == "":
		return s.key("q", "domain", domain)
	default:
		return s.key("q", "role", string(role), "domain", domain)
	}
}

//go:embed lua/*.lua
var luaFiles embed.FS

// The scripts, hashed once. Each is the helpers it uses (linkScript) and
// the operation's own file.
var (
	createClaimScript      = newScript("create_claim.lua")
	getClaimScript         = newScript("get_claim.lua")
	protocolUsesScript     = newScript("protocol_uses.lua")
	protocolIndexScript    = newScript("protocol_index.lua")
	protocolRankScript     = newScript("protocol_rank.lua")
	addCommentScript       = newScript("add_comment.lua")
	listCommentsScript     = newScript("list_comments.lua")
	calibrateScript        = newScript("calibrate.lua")
	listCalibrationsScript = newScript("list_calibrations.lua")
	listClaimsScript       = newScript("list_claims.lua")
	pickClaimScript        = newScript("pick_claim.lua")
	replaceOpenSlotsScript = newScript("replace_open_slots.lua")
	listSlotsScript        = newScript("list_slots.lua")
	nextOpenSlotScript     = newScript("next_open_slot.lua")
	takeScript             = newScript("take.lua")
	finishScript           = newScript("finish.lua")
	releaseExpiredScript   = newScript("release_expired.lua")
	createKeyScript        = newScript("create_key.lua")
	revokeKeyScript        = newScript("revoke_key.lua")
	setSigningKeyScript    = newScript("set_signing_key.lua")
	listKeysScript         = newScript("list_keys.lua")
	deviceCreateScript     = newScript("device_create.lua")
	deviceGetScript        = newScript("device_get.lua")
	deviceApproveScript    = newScript("device_approve.lua")
	deviceConsumeScript    = newScript("device_consume.lua")
)

func newScript(name string) *redis.Script {
	src, err := luaFiles.ReadFile("lua/" + name)
	if err != nil {
		panic(err)
	}
	return redis.NewScript(linkScript(luaHelpers, name, string(src)))
}

// luaHelpers are the field lists (luaFields) and lib.lua, split for
// linkScript.
var luaHelpers = func() []luaUnit {
	lib, err := luaFiles.ReadFile("lua/lib.lua")
	if err != nil {
		panic(err)
	}
	units, err := luaUnits(luaFields() + "\n" + string(lib))
	if err != nil {
		panic(fmt.Sprintf("redisstore: lua/lib.lua: %v", err))
	}
	return units
}()

// scriptErrors maps the codes scripts fail with ("AGORA <code>") to the
// errors of the contract; the codes are those errors' own Codes, so the two
// cannot drift apart.
var scriptErrors = func() map[string]error {
	m := map[string]error{}
	for _, e := range scriptErrorList {
		m[e.Code] = e
	}
	return m
}()

// scriptErrorList is every error a script may fail with; their codes are
// distinct (a test checks), so each maps back to itself.
var scriptErrorList = []*store.Error{
	slots.ErrClaimNotFound, slots.ErrSlotNotFound, identity.ErrKeyNotFound, slots.ErrNoJob, slots.ErrNoClaims,
	slots.ErrSlotTaken, slots.ErrSlotHeld, slots.ErrNotSlotOwner, slots.ErrSlotNotTaken,
	slots.ErrClaimExists, slots.ErrParentNotFound, identity.ErrKeyExists, identity.ErrKeyNameTaken,
	identity.ErrDeviceCodeNotFound, identity.ErrDeviceCodeExpired, identity.ErrDeviceCodeConsumed, identity.ErrDeviceCodeUsed, identity.ErrDeviceCodeExists,
	discussion.ErrPromptNotFound, discussion.ErrPromptClosed, discussion.ErrAlreadyResponded,
	discussion.ErrOwnPrompt, discussion.ErrPromptExists, discussion.ErrReplyToNotFound,
	prism.ErrPipelineNotFound, prism.ErrPipelineExists, prism.ErrVersionConflict,
	arena.ErrGameNotFound, arena.ErrGameExists, arena.ErrVersionConflict,
	agentchat.ErrConversationNotFound,
	agentchat.ErrConversationBusy, agentchat.ErrNotRunning,
	errProtocolsUnindexed,
}

// errProtocolsUnindexed is protocol_uses.lua's answer while the store's
// claims may predate its protocol names index; ProtocolUses builds the
// index and asks again, so it never reaches a caller.
var errProtocolsUnindexed = &store.Error{Kind: store.ErrUnavailable, Code: "protocols_unindexed", Message: "the protocol names of claims stored before are being indexed"}

// scriptErrorPrefix starts every error reply of this package's scripts.
const scriptErrorPrefix = "AGORA "

// interpretError is the one place Redis errors become Agora's: a script's
// "AGORA <code>" reply becomes the contract's error value, redis.Nil becomes
// notFound (the operation's own "not found"), and a failure while ctx is
// done keeps the context's error in the chain even when go-redis reports it
// as a network error.
func interpretError(ctx context.Context, err error, notFound error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, redis.Nil) && notFound != nil {
		return notFound
	}
	var rerr redis.Error
	if errors.As(err, &rerr) {
		if code, ok := strings.CutPrefix(rerr.Error(), scriptErrorPrefix); ok {
			if e, ok := scriptErrors[code]; ok {
				return e
			}
		}
	}
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("redisstore: %w: %w", cerr, err)
	}
	if unreachable(err) {
		return fmt.Errorf("redisstore: %w: %w", store.ErrUnavailable, err)
	}
	return fmt.Errorf("redisstore: %w", err)
}

// unreachable reports an error that says nothing about the request, only
// that Redis could not be reached or did not answer in time: a refused or
// cut connection, a read or write past go-redis's timeouts, no pooled
// connection in time, a server still loading its data.
func unreachable(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, redis.ErrPoolTimeout) || redis.IsLoadingError(err) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
