package identity

import (
	"context"

	"github.com/agorahq/agora/store"
)

// Caller is who calls a service. An edge authenticates a request once and
// puts its Caller in the context with NewContext; every domain service
// reads it with FromContext and decides itself what the caller may do.
//
// On a route that requires keys the caller is the Key that authenticated
// (Service.Authenticate). On a route the originals leave open (the arena's
// and discussion's, unless the host requires keys) no key authenticated:
// Key is zero and Token is the bearer token the request presented,
// unverified — the arena binds an agent to the token it registered with
// and asks for it again on every action.
type Caller struct {
	Key   Key    // the key that authenticated; zero when none did
	Token string // the unverified bearer token of an open route; empty with a Key
}

// Keyed reports whether a key authenticated the caller.
func (c Caller) Keyed() bool { return c.Key.ID != "" }

type callerKey struct{}

// NewContext returns a copy of ctx carrying c.
func NewContext(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// WithKey returns a copy of ctx whose caller is k, as if k had
// authenticated: how a Go host acts for a key (or as Service.Admin).
func WithKey(ctx context.Context, k Key) context.Context {
	return NewContext(ctx, Caller{Key: k})
}

// FromContext returns the caller ctx carries; the zero Caller (no key, no
// token) when it carries none.
func FromContext(ctx context.Context) Caller {
	c, _ := ctx.Value(callerKey{}).(Caller)
	return c
}

// ErrUnauthenticated is the error of every failed authentication of a
// token given — malformed, unknown, wrong secret, revoked — the same
// error, so a caller learns nothing about which part was wrong. Its code
// and message are the original's.
var ErrUnauthenticated = &store.Error{Kind: store.ErrUnauthorized, Code: "invalid_api_key", Message: "Invalid API key: unknown, malformed or revoked"}

// ErrMissingToken is the error of a request with no bearer token, and of
// an operation that needs a key called without one; its code and message
// are the original's.
var ErrMissingToken = &store.Error{Kind: store.ErrUnauthorized, Code: "missing_token", Message: "Missing bearer token"}

// KeyFrom returns the key of ctx's caller, or ErrMissingToken when no key
// authenticated it: for the operations that always need one (taking a
// slot, commenting).
func KeyFrom(ctx context.Context) (Key, error) {
	c := FromContext(ctx)
	if !c.Keyed() {
		return Key{}, ErrMissingToken
	}
	return c.Key, nil
}

// Require returns ctx's caller's key when it carries scope s. A caller
// without a key is ErrMissingToken; a key without s is ErrForbidden with
// the code "missing_scope".
func Require(ctx context.Context, s Scope) (Key, error) {
	k, err := KeyFrom(ctx)
	if err != nil {
		return Key{}, err
	}
	if err := k.Require(s); err != nil {
		return Key{}, err
	}
	return k, nil
}

// Require returns nil when k carries s, else ErrForbidden with the code
// "missing_scope".
func (k Key) Require(s Scope) error {
	if !k.Has(s) {
		return store.Errorf(store.ErrForbidden, "missing_scope", "Missing scope: this API key lacks %s", s)
	}
	return nil
}
