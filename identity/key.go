package identity

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agorahq/agora/internal/text"
	"github.com/agorahq/agora/store"
)

// Scope is a permission carried by an API key. Each domain declares the
// scopes its operations need (slots.ScopeClaimCreate, arena.ScopePlay…);
// identity declares its own, ScopeKeysAdmin.
type Scope string

// ScopeKeysAdmin lets a key create, list and revoke keys and approve device
// logins.
const ScopeKeysAdmin Scope = "keys:admin"

// Scopes returns identity's own scopes.
func Scopes() []Scope { return []Scope{ScopeKeysAdmin} }

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
	// ID is the service's ("key_" and 24 hex digits), or AdminKeyID; a
	// token names it.
	ID string
	// Name is who the key is (a discussion speaks under it), trimmed, 1
	// to MaxKeyNameLen characters, unique among keys and never reused.
	Name string
	// AvatarURL is an absolute http or https URL, or empty.
	AvatarURL string
	// Scopes are the distinct scopes the key carries, aliases resolved.
	Scopes []Scope
	// CreatedAt is when the service created the key, UTC to the
	// millisecond.
	CreatedAt time.Time
	RevokedAt time.Time // zero while the key is not revoked
	// SigningKeyAddress is the address of the key its agent signs its
	// outputs with (AOP's proof of identity), as it registered it; empty
	// until it does.
	SigningKeyAddress string
	Hash              []byte // the SHA-256 of the token's secret; nil for the admin key
}

// MaxSigningKeyAddressLen bounds a signing key address, in characters.
const MaxSigningKeyAddressLen = 200

// Has reports whether the key carries scope s.
func (k Key) Has(s Scope) bool { return slices.Contains(k.Scopes, s) }

// NewKey is the input of Service.CreateKey.
type NewKey struct {
	Name      string  // required, trimmed; it must not be taken
	AvatarURL string  // optional, an absolute http or https URL
	Scopes    []Scope // known scopes or their aliases; duplicates are dropped
}

// The errors of keys. Backends return exactly these values (possibly
// wrapped), so callers can match them with errors.Is.
var (
	ErrKeyNotFound = &store.Error{Kind: store.ErrNotFound, Code: "key_not_found", Message: "API key not found"}
	ErrKeyExists   = &store.Error{Kind: store.ErrConflict, Code: "key_exists", Message: "a key with this ID already exists"}
	// ErrKeyNameTaken refuses a key whose name another key, revoked or
	// not, already has: a key's name is who it is in a discussion.
	ErrKeyNameTaken = &store.Error{Kind: store.ErrConflict, Code: "key_name_taken", Message: "a key with this name already exists; key names are unique and never reused"}
)

// tokenPrefix starts every token the service issues; a token is
// "agora.<key id>.<secret>", the secret being "_" and 32 random bytes in
// unpadded base64url. The key ID lets Authenticate find the key without
// comparing the secret against every stored hash. The "_" ends what the
// original's `aop setup` shows as a key's prefix (the token up to its second
// "_"), so it shows the key ID and none of the secret; secrets issued
// without it keep working.
const tokenPrefix = "agora."

// maxKeyIDLen bounds the key ID a token may name: the Service's IDs are
// under 40 bytes.
const maxKeyIDLen = 128

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
	// No key has an ID a store could not even read, or one longer than
	// any the Service makes: one of invalid UTF-8 or with a NUL would fail
	// PostgreSQL's lookup, and with it the lookups of every request it was
	// coalesced with; a long one would only swell that batch.
	return id, secret, ok && id != "" && secret != "" && len(id) <= maxKeyIDLen &&
		utf8.ValidString(id) && !strings.ContainsRune(id, 0)
}

// secretMatches compares the SHA-256 of secret with hash in constant time.
func secretMatches(secret string, hash []byte) bool {
	h := sha256.Sum256([]byte(secret))
	return subtle.ConstantTimeCompare(h[:], hash) == 1
}

// validateNewKey trims and checks k, resolves the aliases of its scopes
// and refuses any scope the service does not know.
func (s *Service) validateNewKey(k *NewKey) error {
	k.Name = strings.TrimSpace(k.Name)
	if err := text.Check("name", k.Name, true, MaxKeyNameLen); err != nil {
		return err
	}
	if k.Name == s.Admin().Name {
		return ErrKeyNameTaken // the admin key's, which no store holds
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
	for _, sc := range k.Scopes {
		if to, ok := s.aliases[sc]; ok {
			sc = to
		}
		if !slices.Contains(s.scopes, sc) {
			return s.unknownScope(sc)
		}
		if !seen[sc] {
			seen[sc] = true
			scopes = append(scopes, sc)
		}
	}
	k.Scopes = scopes
	return nil
}

// unknownScope is the error of a scope no domain declared: it lists the
// known ones and the aliases.
func (s *Service) unknownScope(sc Scope) error {
	names := make([]string, len(s.scopes))
	for i, a := range s.scopes {
		names[i] = string(a)
	}
	msg := "unknown scope %q; scopes are %s"
	if len(s.aliases) > 0 {
		var as []string
		for from, to := range s.aliases {
			as = append(as, string(from)+" is "+string(to))
		}
		slices.Sort(as)
		msg += " (" + strings.ReplaceAll(strings.Join(as, ", "), "%", "%%") + ")"
	}
	return store.Errorf(store.ErrInvalid, "invalid_scope", msg, sc, strings.Join(names, ", "))
}
