package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// identityEnv is one subtest's identity service, clock and helpers.
type identityEnv struct {
	t     *testing.T
	ctx   context.Context
	admin context.Context // ctx with the admin principal as the caller
	svc   *identity.Service
	clock *Clock
}

// newIdentity returns an identity service over st that knows the scopes of
// slots and prism, as a host serving them has it.
func newIdentity(st identity.Store, opts ...identity.Option) *identity.Service {
	known := slices.Concat(slots.Scopes(), identity.Scopes(), prism.Scopes(), slots.UnservedScopes())
	return identity.New(st, append([]identity.Option{identity.WithScopes(known, slots.ScopeAliases())}, opts...)...)
}

func newIdentityEnv(t *testing.T, newStores NewStores) *identityEnv {
	t.Helper()
	clock := NewClock()
	svc := newIdentity(newStores(t).Identity, identity.WithClock(clock.Now))
	ctx := context.Background()
	return &identityEnv{t: t, ctx: ctx, admin: identity.WithKey(ctx, svc.Admin()), svc: svc, clock: clock}
}

func (e *identityEnv) agent(name string) identity.Key {
	e.t.Helper()
	k, _, err := e.svc.CreateKey(e.admin, identity.NewKey{Name: name, Scopes: []identity.Scope{slots.ScopeCommentCreate}})
	require.NoError(e.t, err)
	return k
}

// RunIdentity runs the API key and device login tests.
func RunIdentity(t *testing.T, newStores NewStores) {
	t.Run("DeviceLogin", func(t *testing.T) {
		t.Parallel()
		e := newIdentityEnv(t, newStores)
		login, err := e.svc.StartDeviceLogin(e.ctx, identity.NewDeviceLogin{AgentModel: "sonnet-4.6",
			Scopes: []identity.Scope{"claim:new", slots.ScopeCommentCreate, prism.ScopeConsensusWrite}})
		require.NoError(t, err)
		require.Regexp(t, `^[B-Z]{4}-[B-Z]{4}$`, login.UserCode)
		require.Equal(t, e.clock.Now().Add(identity.DeviceCodeTTL), login.ExpiresAt)
		typed := strings.ToLower(strings.ReplaceAll(login.UserCode, "-", " "))
		d, err := e.svc.DeviceCodeByUserCode(e.ctx, typed)
		require.NoError(t, err)
		require.Equal(t, identity.DevicePending, d.Status)
		require.Equal(t, "agent "+login.UserCode, d.Name)
		require.Equal(t, "sonnet-4.6", d.AgentModel)
		require.Equal(t, []identity.Scope{slots.ScopeClaimCreate, slots.ScopeCommentCreate, prism.ScopeConsensusWrite}, d.Scopes)
		_, err = e.svc.DeviceCodeByUserCode(e.ctx, "BCDF-GHJK")
		requireCode(t, identity.ErrDeviceCodeNotFound, err)
		for _, bad := range [][]identity.Scope{{identity.ScopeKeysAdmin}, {"claim:delete"}} {
			_, err = e.svc.StartDeviceLogin(e.ctx, identity.NewDeviceLogin{Scopes: bad})
			require.ErrorIs(t, err, store.ErrInvalid, bad)
		}

		poll, err := e.svc.PollDeviceLogin(e.ctx, login.DeviceCode)
		require.NoError(t, err)
		require.Equal(t, identity.DevicePending, poll.Status)
		require.Empty(t, poll.Token)
		_, err = e.svc.PollDeviceLogin(e.ctx, "not-a-device-code")
		requireCode(t, identity.ErrDeviceCodeNotFound, err)
		_, err = e.svc.ApproveDeviceCode(e.admin, "ZZZZ-ZZZZ")
		requireCode(t, identity.ErrDeviceCodeNotFound, err)
		d, err = e.svc.ApproveDeviceCode(e.admin, login.UserCode)
		require.NoError(t, err)
		require.Equal(t, identity.DeviceApproved, d.Status)
		require.Equal(t, "admin", d.ApprovedBy)
		_, err = e.svc.ApproveDeviceCode(e.admin, login.UserCode)
		requireCode(t, identity.ErrDeviceCodeUsed, err)

		// Many polls at once: exactly one receives the key.
		var wg sync.WaitGroup
		tokens := make(chan string, 16)
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p, err := e.svc.PollDeviceLogin(e.ctx, login.DeviceCode)
				if err != nil {
					requireCode(t, identity.ErrDeviceCodeConsumed, err)
					return
				}
				tokens <- p.Token
			}()
		}
		wg.Wait()
		close(tokens)
		require.Len(t, tokens, 1, "one poll consumes the login")
		k, err := e.svc.Authenticate(e.ctx, <-tokens)
		require.NoError(t, err)
		require.Equal(t, "agent "+login.UserCode, k.Name)
		require.True(t, k.Has(slots.ScopeClaimCreate))
		require.False(t, k.Has(identity.ScopeKeysAdmin))
		d, err = e.svc.DeviceCodeByUserCode(e.ctx, login.UserCode)
		require.NoError(t, err)
		require.Equal(t, identity.DeviceConsumed, d.Status)
		_, err = e.svc.ApproveDeviceCode(e.admin, login.UserCode)
		requireCode(t, identity.ErrDeviceCodeUsed, err)

		// Races, repeated: of many approvals of one code one wins, the
		// others are told it is used; of many polls after it, one gets a key.
		for round := range 5 {
			l, err := e.svc.StartDeviceLogin(e.ctx, identity.NewDeviceLogin{Scopes: []identity.Scope{slots.ScopeCommentCreate}})
			require.NoError(t, err)
			var approved, polled atomic.Int32
			var wg sync.WaitGroup
			for i := range 16 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if i%2 == 0 {
						if _, err := e.svc.ApproveDeviceCode(e.admin, l.UserCode); err == nil {
							approved.Add(1)
						} else {
							requireCode(t, identity.ErrDeviceCodeUsed, err)
						}
						return
					}
					if p, err := e.svc.PollDeviceLogin(e.ctx, l.DeviceCode); err == nil && p.Token != "" {
						polled.Add(1)
					} else if err != nil {
						requireCode(t, identity.ErrDeviceCodeConsumed, err)
					}
				}()
			}
			wg.Wait()
			require.EqualValues(t, 1, approved.Load(), "round %d: one approval wins", round)
			if polled.Load() == 0 { // every poll came before the approval
				p, err := e.svc.PollDeviceLogin(e.ctx, l.DeviceCode)
				require.NoError(t, err)
				require.NotEmpty(t, p.Token)
				polled.Add(1)
			}
			require.EqualValues(t, 1, polled.Load(), "round %d: one poll gets the key", round)
		}

		// Codes expire: unapproved, and approved but never polled.
		late, err := e.svc.StartDeviceLogin(e.ctx, identity.NewDeviceLogin{Name: "Skeptic-7", Scopes: []identity.Scope{slots.ScopeCommentCreate}})
		require.NoError(t, err)
		unpolled, err := e.svc.StartDeviceLogin(e.ctx, identity.NewDeviceLogin{Scopes: []identity.Scope{slots.ScopeCommentCreate}})
		require.NoError(t, err)
		_, err = e.svc.ApproveDeviceCode(e.admin, unpolled.UserCode)
		require.NoError(t, err)
		e.clock.Advance(identity.DeviceCodeTTL)
		_, err = e.svc.ApproveDeviceCode(e.admin, late.UserCode)
		requireCode(t, identity.ErrDeviceCodeExpired, err)
		for _, code := range []string{late.DeviceCode, unpolled.DeviceCode} {
			_, err = e.svc.PollDeviceLogin(e.ctx, code)
			requireCode(t, identity.ErrDeviceCodeExpired, err)
		}
		_, err = e.svc.PollDeviceLogin(e.ctx, login.DeviceCode)
		requireCode(t, identity.ErrDeviceCodeConsumed, err, "a consumed login stays consumed")
	})

	t.Run("Keys", func(t *testing.T) {
		t.Parallel()
		e := newIdentityEnv(t, newStores)
		k, token, err := e.svc.CreateKey(e.admin, identity.NewKey{Name: "Skeptic-7", Scopes: []identity.Scope{slots.ScopeCommentCreate, slots.ScopeClaimCreate, slots.ScopeCommentCreate}})
		require.NoError(t, err)
		require.Equal(t, []identity.Scope{slots.ScopeCommentCreate, slots.ScopeClaimCreate}, k.Scopes)
		require.NotContains(t, string(k.Hash), token)

		stored, err := e.svc.Store().GetKey(e.ctx, k.ID)
		require.NoError(t, err)
		require.Equal(t, k.Hash, stored.Hash)
		require.Equal(t, k.Scopes, stored.Scopes)

		got, err := e.svc.Authenticate(e.ctx, token)
		require.NoError(t, err)
		require.Equal(t, k.ID, got.ID)
		require.Equal(t, "Skeptic-7", got.Name)

		for _, bad := range []string{"", "nonsense", token + "x", token[:len(token)-1], "agora." + k.ID + ".", "agora.key_missing.secret"} {
			_, err := e.svc.Authenticate(e.ctx, bad)
			require.ErrorIs(t, err, store.ErrUnauthorized, "token %q", bad)
		}

		other, _, err := e.svc.CreateKey(e.admin, identity.NewKey{Name: "Other"})
		require.NoError(t, err)
		keys, err := e.svc.Keys(e.admin)
		require.NoError(t, err)
		require.Len(t, keys, 2)
		require.Equal(t, k.ID, keys[0].ID)
		require.Equal(t, other.ID, keys[1].ID)

		require.NoError(t, e.svc.RevokeKey(e.admin, k.ID))
		_, err = e.svc.Authenticate(e.ctx, token)
		require.ErrorIs(t, err, store.ErrUnauthorized)
		revoked, err := e.svc.Store().GetKey(e.ctx, k.ID)
		require.NoError(t, err)
		at := revoked.RevokedAt
		require.NotZero(t, at)
		e.clock.Advance(time.Second)
		require.NoError(t, e.svc.RevokeKey(e.admin, k.ID), "revoking twice is not an error")
		revoked, err = e.svc.Store().GetKey(e.ctx, k.ID)
		require.NoError(t, err)
		require.Equal(t, at, revoked.RevokedAt, "the first revocation time stays")
		requireCode(t, identity.ErrKeyNotFound, e.svc.RevokeKey(e.admin, "key_missing"))

		_, _, err = e.svc.CreateKey(e.admin, identity.NewKey{Name: "x", Scopes: []identity.Scope{"root"}})
		require.ErrorIs(t, err, store.ErrInvalid)
		require.ErrorIs(t, e.svc.Store().CreateKey(e.ctx, other), store.ErrConflict)
	})

	t.Run("KeyLookups", func(t *testing.T) {
		t.Parallel()
		e := newIdentityEnv(t, newStores)
		st := e.svc.Store()
		a, c := e.agent("lookup-a"), e.agent("lookup-c")
		require.NoError(t, e.svc.RevokeKey(e.admin, c.ID))
		got, err := st.GetKeys(e.ctx, []string{c.ID, "key_missing", a.ID, a.ID, "", strings.Repeat("k", 500), "ключ 🔑"})
		require.NoError(t, err)
		require.Len(t, got, 2, "each key that exists once, a revoked one too")
		for _, k := range got {
			want, err := st.GetKey(e.ctx, k.ID)
			require.NoError(t, err)
			require.Equal(t, want, k, "as GetKey reads it")
		}
		require.ElementsMatch(t, []string{a.ID, c.ID}, []string{got[0].ID, got[1].ID})
		got, err = st.GetKeys(e.ctx, nil)
		require.NoError(t, err)
		require.Empty(t, got)

		// Two Services on one store, as two processes: many requests at
		// once, a key's several together, each authenticated as its own
		// key; a revocation holds for every request after it, in both.
		other := newIdentity(st)
		svcs := []*identity.Service{e.svc, other}
		ids, tokens := make([]string, 8), make([]string, 8)
		for i := range ids {
			k, token, err := e.svc.CreateKey(e.admin, identity.NewKey{Name: fmt.Sprint("lookup-", i)})
			require.NoError(t, err)
			ids[i], tokens[i] = k.ID, token
		}
		for range raceRepeats {
			concurrently(64, func(i int) {
				k, err := svcs[i%2].Authenticate(e.ctx, tokens[i%8])
				require.NoError(t, err)
				require.Equal(t, ids[i%8], k.ID)
			})
		}
		require.NoError(t, other.RevokeKey(identity.WithKey(e.ctx, other.Admin()), ids[0]))
		concurrently(64, func(i int) {
			k, err := svcs[i%2].Authenticate(e.ctx, tokens[i%8])
			if i%8 == 0 {
				require.ErrorIs(t, err, store.ErrUnauthorized, "revoked in the other Service")
				return
			}
			require.NoError(t, err)
			require.Equal(t, ids[i%8], k.ID)
		})
		for _, bad := range []string{"agora.\xff\xfe.secret", "agora.a\x00b.secret", "agora.ключ.secret", "agora." + strings.Repeat("k", 1<<16) + ".secret"} {
			_, err := e.svc.Authenticate(e.ctx, bad)
			require.ErrorIs(t, err, store.ErrUnauthorized, "token %q", bad)
		}
	})

	t.Run("KeyNamesAreUnique", func(t *testing.T) {
		t.Parallel()
		e := newIdentityEnv(t, newStores)
		for r := range raceRepeats {
			name := fmt.Sprint("dupname-", r)
			var created atomic.Int32
			concurrently(20, func(i int) {
				_, _, err := e.svc.CreateKey(e.admin, identity.NewKey{Name: name})
				if err == nil {
					created.Add(1)
					return
				}
				requireCode(t, identity.ErrKeyNameTaken, err)
			})
			require.EqualValues(t, 1, created.Load(), "one key of each name")
		}
		concurrently(20, func(i int) {
			_, _, err := e.svc.CreateKey(e.admin, identity.NewKey{Name: fmt.Sprint("distinct-", i)})
			require.NoError(t, err)
		})
		k := e.agent("Rotated")
		require.NoError(t, e.svc.RevokeKey(e.admin, k.ID))
		_, _, err := e.svc.CreateKey(e.admin, identity.NewKey{Name: "Rotated"})
		requireCode(t, identity.ErrKeyNameTaken, err, "a revoked key keeps its name")
		_, _, err = e.svc.CreateKey(e.admin, identity.NewKey{Name: "  Rotated "})
		requireCode(t, identity.ErrKeyNameTaken, err, "names are compared trimmed")
		_, _, err = e.svc.CreateKey(e.admin, identity.NewKey{Name: "admin"})
		requireCode(t, identity.ErrKeyNameTaken, err, "the admin key's name is taken")
		keys, err := e.svc.Keys(e.admin)
		require.NoError(t, err)
		require.Len(t, keys, raceRepeats+20+1, "no refused key was stored")
	})

	t.Run("DeviceLoginNameTaken", func(t *testing.T) {
		t.Parallel()
		e := newIdentityEnv(t, newStores)
		_, err := e.svc.StartDeviceLogin(e.ctx, identity.NewDeviceLogin{Name: " admin "})
		requireCode(t, identity.ErrKeyNameTaken, err, "a device login cannot take the admin key's name")

		// A name taken between the login's start and its poll refuses the
		// key, and the login is not consumed: nothing is lost or half-written.
		login, err := e.svc.StartDeviceLogin(e.ctx, identity.NewDeviceLogin{Name: "Taken-1", Scopes: []identity.Scope{slots.ScopeCommentCreate}})
		require.NoError(t, err)
		_, err = e.svc.ApproveDeviceCode(e.admin, login.UserCode)
		require.NoError(t, err)
		first := e.agent("Taken-1")
		for range 2 {
			_, err = e.svc.PollDeviceLogin(e.ctx, login.DeviceCode)
			requireCode(t, identity.ErrKeyNameTaken, err)
		}
		d, err := e.svc.DeviceCodeByUserCode(e.ctx, login.UserCode)
		require.NoError(t, err)
		require.Equal(t, identity.DeviceApproved, d.Status, "the refused poll did not consume the login")
		keys, err := e.svc.Keys(e.admin)
		require.NoError(t, err)
		require.Len(t, keys, 1)
		require.Equal(t, first.ID, keys[0].ID)

		// Logins of one name polled at once: one key of that name, the
		// other login refused and still approved.
		for r := range raceRepeats {
			name := fmt.Sprint("devname-", r)
			codes := make([]string, 2)
			for i := range codes {
				l, err := e.svc.StartDeviceLogin(e.ctx, identity.NewDeviceLogin{Name: name})
				require.NoError(t, err)
				_, err = e.svc.ApproveDeviceCode(e.admin, l.UserCode)
				require.NoError(t, err)
				codes[i] = l.DeviceCode
			}
			var got atomic.Int32
			concurrently(2, func(i int) {
				p, err := e.svc.PollDeviceLogin(e.ctx, codes[i])
				if err == nil {
					require.Equal(t, name, p.Key.Name)
					got.Add(1)
					return
				}
				requireCode(t, identity.ErrKeyNameTaken, err)
			})
			require.EqualValues(t, 1, got.Load(), "round %d: one login gets the name", r)
		}
		keys, err = e.svc.Keys(e.admin)
		require.NoError(t, err)
		require.Len(t, keys, 1+raceRepeats, "no refused key was stored")
	})

	t.Run("SigningKeys", func(t *testing.T) {
		t.Parallel()
		e := newIdentityEnv(t, newStores)
		k, token, err := e.svc.CreateKey(e.admin, identity.NewKey{Name: "Signer"})
		require.NoError(t, err)
		other, _, err := e.svc.CreateKey(e.admin, identity.NewKey{Name: "Other"})
		require.NoError(t, err)
		require.Empty(t, k.SigningKeyAddress)
		require.NoError(t, e.svc.RegisterSigningKey(identity.WithKey(e.ctx, k), " 0xpoi_1f2e "))
		got, err := e.svc.Authenticate(e.ctx, token)
		require.NoError(t, err)
		require.Equal(t, "0xpoi_1f2e", got.SigningKeyAddress, "stored per key, trimmed; the key's profile reads it")
		require.NoError(t, e.svc.RegisterSigningKey(identity.WithKey(e.ctx, k), "0xpoi_3d4c"))
		keys, err := e.svc.Keys(e.admin)
		require.NoError(t, err)
		require.Equal(t, "0xpoi_3d4c", keys[0].SigningKeyAddress, "a later one replaces it")
		require.Empty(t, keys[1].SigningKeyAddress, "the other key has none")
		require.Equal(t, other.ID, keys[1].ID)

		for _, bad := range []string{"", "  ", "nul\x00", strings.Repeat("a", identity.MaxSigningKeyAddressLen+1)} {
			require.ErrorIs(t, e.svc.RegisterSigningKey(identity.WithKey(e.ctx, k), bad), store.ErrInvalid, "%q", bad)
		}
		require.ErrorIs(t, e.svc.RegisterSigningKey(identity.WithKey(e.ctx, identity.Key{ID: identity.AdminKeyID}), "0xpoi"), store.ErrInvalid)
		requireCode(t, identity.ErrKeyNotFound, e.svc.Store().SetSigningKey(e.ctx, "key_missing", "0xpoi"))
		got, err = e.svc.Store().GetKey(e.ctx, k.ID)
		require.NoError(t, err)
		require.Equal(t, "0xpoi_3d4c", got.SigningKeyAddress, "refusals changed nothing")
	})

}
