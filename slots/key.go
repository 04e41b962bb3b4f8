package slots

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/url"
	"slices"
	"strings"

	"github.com/agorahq/agora/internal/text"
	"github.com/agorahq/agora/store"
)

// Scope is a permission carried by an API key.
type Scope string

// The scopes an API key can carry.
const (
	ScopeSlotsConfigure Scope = "slots:configure" // configure role slots
	ScopeCommentCreate  Scope = "comment:create"  // comment, take and finish slots
	ScopeClaimCreate    Scope = "claim:create"    // create claims
	ScopeKeysAdmin      Scope = "keys:admin"      // create, list and revoke keys
	ScopePipelineReview Scope = "pipeline:review" // resolve pipeline flags

	// The scopes of the arena and discussion routes when the host requires
	// keys on them (httpapi.WithKeys).
	ScopeArenaPlay       Scope = "arena:play"       // register arena agents, argue, decide
	ScopeArenaAdmin      Scope = "arena:admin"      // create, start and advance games, fillers, the demo
	ScopeDiscussionWrite Scope = "discussion:write" // ask, answer, post to the squad chat
	ScopeDiscussionAdmin Scope = "discussion:admin" // resolve or cancel any prompt, post as a human

	// The original's scopes that guard routes Agora does not serve: a key
	// may carry them (the original's agent setup asks for them) and they
	// grant nothing here.
	ScopeConsensusWrite      Scope = "consensus:write"
	ScopeClassificationWrite Scope = "classification:write"
	ScopePolicyWrite         Scope = "policy:write"
	ScopeOutputWrite         Scope = "output:write"
)

// ScopeAliases maps the original's names of scopes to Agora's: a key asked
// for with "claim:new" carries ScopeClaimCreate.
var ScopeAliases = map[Scope]Scope{"claim:new": ScopeClaimCreate}

// AllScopes lists every scope, in a stable order.
var AllScopes = []Scope{ScopeSlotsConfigure, ScopeCommentCreate, ScopeClaimCreate, ScopeKeysAdmin, ScopePipelineReview,
	ScopeArenaPlay, ScopeArenaAdmin, ScopeDiscussionWrite, ScopeDiscussionAdmin,
	ScopeConsensusWrite, ScopeClassificationWrite, ScopePolicyWrite, ScopeOutputWrite}

// Limits on key fields.
const (
	MaxKeyNameLen   = 100
	MaxAvatarURLLen = 2048
)

// AdminKeyID is the ID of the principal that authenticates with the admin key
// given to WithAdminKey. It holds every scope.
const AdminKeyID = "admin"

// Key is an agent's API key. The secret is never stored: Hash is its SHA-256.
type Key struct {
	ID        string  `json:"_id"`
	Name      string  `json:"name"`
	AvatarURL string  `json:"avatarUrl"`
	Scopes    []Scope `json:"scopes"`
	CreatedAt int64   `json:"createdAt"`
	RevokedAt int64   `json:"revokedAt,omitempty"`
	// SigningKeyAddress is the address of the key its agent signs its
	// outputs with (AOP's proof of identity), as it registered it; empty
	// until it does.
	SigningKeyAddress string `json:"signingKeyAddress,omitempty"`
	Hash              []byte `json:"-"`
}

// MaxSigningKeyAddressLen bounds a signing key address, in characters.
const MaxSigningKeyAddressLen = 200

// Has reports whether the key carries scope s.
func (k Key) Has(s Scope) bool { return slices.Contains(k.Scopes, s) }

// NewKey is the input of Service.CreateKey.
type NewKey struct {
	Name      string
	AvatarURL string
	Scopes    []Scope
}

// tokenPrefix starts every token the service issues; a token is
// "agora.<key id>.<secret>", the secret being "_" and 32 random bytes in
// unpadded base64url. The key ID lets Authenticate find the key without
// comparing the secret against every stored hash. The "_" ends what the
// original's `aop setup` shows as a key's prefix (the token up to its second
// "_"), so it shows the key ID and none of the secret; secrets issued
// without it keep working.
const tokenPrefix = "agora."

func newSecret() (secret string, hash []byte) {
	var b [32]byte
	_, _ = rand.Read(b[:])
	secret = "_" + base64.RawURLEncoding.EncodeToString(b[:])
	h := sha256.Sum256([]byte(secret))
	return secret, h[:]
}

// parseToken splits a token into key ID and secret.
func parseToken(token string) (id, secret string, ok bool) {
	rest, ok := strings.CutPrefix(token, tokenPrefix)
	if !ok {
		return "", "", false
	}
	id, secret, ok = strings.Cut(rest, ".")
	return id, secret, ok && id != "" && secret != ""
}

// secretMatches compares the SHA-256 of secret with hash in constant time.
func secretMatches(secret string, hash []byte) bool {
	h := sha256.Sum256([]byte(secret))
	return subtle.ConstantTimeCompare(h[:], hash) == 1
}

func validateNewKey(k *NewKey) error {
	k.Name = strings.TrimSpace(k.Name)
	if err := text.Check("name", k.Name, true, MaxKeyNameLen); err != nil {
		return err
	}
	k.AvatarURL = strings.TrimSpace(k.AvatarURL)
	if k.AvatarURL != "" {
		u, err := url.Parse(k.AvatarURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(k.AvatarURL) > MaxAvatarURLLen {
			return store.Errorf(store.ErrInvalid, "invalid_avatar_url", "avatarUrl must be an absolute http or https URL of at most %d bytes", MaxAvatarURLLen)
		}
	}
	seen := map[Scope]bool{}
	scopes := make([]Scope, 0, len(k.Scopes))
	for _, s := range k.Scopes {
		if alias, ok := ScopeAliases[s]; ok {
			s = alias
		}
		if !slices.Contains(AllScopes, s) {
			names := make([]string, len(AllScopes))
			for i, a := range AllScopes {
				names[i] = string(a)
			}
			return store.Errorf(store.ErrInvalid, "invalid_scope", "unknown scope %q; scopes are %s (claim:new is claim:create)", s, strings.Join(names, ", "))
		}
		if !seen[s] {
			seen[s] = true
			scopes = append(scopes, s)
		}
	}
	k.Scopes = scopes
	return nil
}
