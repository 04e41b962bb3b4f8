package identity_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/store"
	"github.com/agorahq/agora/store/memstore"
)

// known is a host's list: a domain's scopes around identity's own, and an
// alias.
var (
	known   = []identity.Scope{"claim:create", "comment:create", identity.ScopeKeysAdmin, "arena:play"}
	aliases = map[identity.Scope]identity.Scope{"claim:new": "claim:create"}
)

func newService(opts ...identity.Option) *identity.Service {
	return identity.New(memstore.New(), append([]identity.Option{identity.WithScopes(known, aliases)}, opts...)...)
}

func requireCode(t *testing.T, kind error, code string, err error) {
	t.Helper()
	require.ErrorIs(t, err, kind)
	var se *store.Error
	require.ErrorAs(t, err, &se)
	require.Equal(t, code, se.Code)
}

func TestAdminKey(t *testing.T) {
	ctx := context.Background()
	svc := newService(identity.WithAdminKey("s3cret"))
	k, err := svc.Authenticate(ctx, "s3cret")
	require.NoError(t, err)
	require.Equal(t, identity.AdminKeyID, k.ID)
	require.Equal(t, known, k.Scopes, "every known scope, in order")
	_, err = svc.Authenticate(ctx, "s3cre")
	requireCode(t, store.ErrUnauthorized, "invalid_api_key", err)
	_, err = newService().Authenticate(ctx, "s3cret")
	require.ErrorIs(t, err, store.ErrUnauthorized, "no admin key configured")
}

// TestTokenPrefixHidesTheSecret: the original's `aop setup` prints a saved
// key's "prefix", the token up to its second "_"; for Agora's tokens that
// is the key ID, with nothing of the secret.
func TestTokenPrefixHidesTheSecret(t *testing.T) {
	svc := newService()
	admin := identity.WithKey(context.Background(), svc.Admin())
	for i := range 20 {
		k, token, err := svc.CreateKey(admin, identity.NewKey{Name: fmt.Sprint("agent-", i)})
		require.NoError(t, err)
		prefix := strings.Join(strings.SplitN(token, "_", 3)[:2], "_")
		require.Equal(t, "agora."+k.ID+".", prefix)
		_, err = svc.Authenticate(context.Background(), token)
		require.NoError(t, err)
	}
}

// TestCallerInContext: the caller a context carries is what every service
// reads; without one there is no key, and the operations that need one say
// so as a failed authentication would.
func TestCallerInContext(t *testing.T) {
	ctx := context.Background()
	require.Equal(t, identity.Caller{}, identity.FromContext(ctx))
	_, err := identity.KeyFrom(ctx)
	requireCode(t, store.ErrUnauthorized, "missing_token", err)
	_, err = identity.Require(ctx, "arena:play")
	requireCode(t, store.ErrUnauthorized, "missing_token", err)

	open := identity.NewContext(ctx, identity.Caller{Token: "agent-secret"})
	require.False(t, identity.FromContext(open).Keyed())
	require.Equal(t, "agent-secret", identity.FromContext(open).Token)
	_, err = identity.KeyFrom(open)
	require.ErrorIs(t, err, store.ErrUnauthorized, "an unverified token is no key")

	k := identity.Key{ID: "key_1", Name: "Ada", Scopes: []identity.Scope{"arena:play"}}
	keyed := identity.WithKey(ctx, k)
	require.True(t, identity.FromContext(keyed).Keyed())
	got, err := identity.Require(keyed, "arena:play")
	require.NoError(t, err)
	require.Equal(t, k.ID, got.ID)
	_, err = identity.Require(keyed, "arena:admin")
	requireCode(t, store.ErrForbidden, "missing_scope", err)
	require.EqualError(t, err, "Missing scope: this API key lacks arena:admin")
}

// TestScopesAreTheHosts: a key carries only the scopes the host declared
// (WithScopes), an alias stands for its scope, and an unknown scope's error
// lists them all in the host's order.
func TestScopesAreTheHosts(t *testing.T) {
	ctx := context.Background()
	svc := newService()
	admin := identity.WithKey(ctx, svc.Admin())
	k, _, err := svc.CreateKey(admin, identity.NewKey{Name: "a", Scopes: []identity.Scope{"claim:new", "claim:create", "arena:play"}})
	require.NoError(t, err)
	require.Equal(t, []identity.Scope{"claim:create", "arena:play"}, k.Scopes)
	_, _, err = svc.CreateKey(admin, identity.NewKey{Name: "b", Scopes: []identity.Scope{"arena:admin"}})
	requireCode(t, store.ErrInvalid, "invalid_scope", err)
	require.EqualError(t, err, `unknown scope "arena:admin"; scopes are claim:create, comment:create, keys:admin, arena:play (claim:new is claim:create)`)
	_, err = svc.StartDeviceLogin(ctx, identity.NewDeviceLogin{Scopes: []identity.Scope{"arena:admin"}})
	requireCode(t, store.ErrInvalid, "invalid_scope", err)

	// Without WithScopes, a key may carry identity's own scope only.
	bare := identity.New(memstore.New())
	require.Equal(t, []identity.Scope{identity.ScopeKeysAdmin}, bare.Scopes())
	_, _, err = bare.CreateKey(identity.WithKey(ctx, bare.Admin()), identity.NewKey{Name: "c", Scopes: []identity.Scope{"claim:create"}})
	require.EqualError(t, err, `unknown scope "claim:create"; scopes are keys:admin`)
	// A host's list without keys:admin still knows it.
	withOwn := identity.New(memstore.New(), identity.WithScopes([]identity.Scope{"arena:play"}, nil))
	require.Equal(t, []identity.Scope{"arena:play", identity.ScopeKeysAdmin}, withOwn.Scopes())
}

// TestKeysAdminIsTheServices: creating, listing and revoking keys and
// approving device logins check the caller's scopes in the service, so a
// Go host is held to the same rule as an HTTP agent.
func TestKeysAdminIsTheServices(t *testing.T) {
	ctx := context.Background()
	svc := newService()
	admin := identity.WithKey(ctx, svc.Admin())
	keeper, _, err := svc.CreateKey(admin, identity.NewKey{Name: "keeper", Scopes: []identity.Scope{identity.ScopeKeysAdmin, "comment:create"}})
	require.NoError(t, err)
	agent, _, err := svc.CreateKey(admin, identity.NewKey{Name: "agent", Scopes: []identity.Scope{"comment:create"}})
	require.NoError(t, err)
	asKeeper, asAgent := identity.WithKey(ctx, keeper), identity.WithKey(ctx, agent)

	for _, c := range []context.Context{ctx, asAgent} {
		_, _, err = svc.CreateKey(c, identity.NewKey{Name: "x"})
		requireCode(t, store.ErrForbidden, "insufficient_scope", err)
		require.Error(t, svc.RevokeKey(c, agent.ID))
	}
	_, err = svc.Keys(asAgent)
	requireCode(t, store.ErrForbidden, "missing_scope", err)
	_, err = svc.Keys(ctx)
	requireCode(t, store.ErrUnauthorized, "missing_token", err)

	_, _, err = svc.CreateKey(asKeeper, identity.NewKey{Name: "y", Scopes: []identity.Scope{"arena:play"}})
	requireCode(t, store.ErrForbidden, "insufficient_scope", err)
	_, _, err = svc.CreateKey(asKeeper, identity.NewKey{Name: "y", Scopes: []identity.Scope{"comment:create"}})
	require.NoError(t, err)

	login, err := svc.StartDeviceLogin(ctx, identity.NewDeviceLogin{Scopes: []identity.Scope{"arena:play"}})
	require.NoError(t, err)
	_, err = svc.ApproveDeviceCode(asAgent, login.UserCode)
	requireCode(t, store.ErrForbidden, "insufficient_scope", err)
	_, err = svc.ApproveDeviceCode(asKeeper, login.UserCode)
	requireCode(t, store.ErrForbidden, "insufficient_scope", err)
	_, err = svc.ApproveDeviceCode(admin, login.UserCode)
	require.NoError(t, err)

	ks, err := svc.Keys(asKeeper)
	require.NoError(t, err)
	require.Len(t, ks, 3)
	require.NoError(t, svc.RevokeKey(asKeeper, agent.ID))
}
