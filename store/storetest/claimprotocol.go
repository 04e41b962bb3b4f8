package storetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// runClaimProtocols checks the protocol a claim keeps (slots.Claim.Protocol):
// stored with the claim and its pipeline, answered by every read of the
// claim, a job's included, and the claims listing's Protocol filter, alone,
// with a domain, paged and ordered.
func runClaimProtocols(t *testing.T, newStores NewStores) {
	t.Run("ClaimProtocols", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 0)
		create := func(protocol, domain string) slots.Claim {
			t.Helper()
			e.clock.Advance(time.Millisecond)
			c, _, err := e.svc.CreateClaim(e.ctx, prism.NewClaim{NewClaim: slots.NewClaim{Title: "Under " + protocol, Domain: domain}, Protocol: protocol})
			require.NoError(t, err)
			got, err := e.slots.Claim(e.ctx, c.ID)
			require.NoError(t, err)
			require.Equal(t, c, got, "stored as created")
			return c
		}
		sim := create("simulation", "")
		solo := create(" "+prism.PrismV1SoloID+" ", "")
		none := create("", "")
		simEthology := create("simulation", "ethology")
		e.clock.Advance(time.Millisecond)
		plain, err := e.slots.CreateClaim(e.ctx, slots.NewClaim{Title: "No pipeline"})
		require.NoError(t, err)

		require.Equal(t, "simulation", sim.Protocol, "a name no one registered, kept as given")
		require.Equal(t, prism.PrismV1SoloID, solo.Protocol, "trimmed")
		require.Equal(t, prism.PrismV1ID, none.Protocol, "none given: the pipeline's")
		require.Empty(t, plain.Protocol, "no pipeline, no protocol")
		p, err := e.svc.Pipeline(e.ctx, sim.ID)
		require.NoError(t, err)
		require.Equal(t, prism.PrismV1ID, p.Protocol.ID, "an unregistered name runs Prism v1")
		p, err = e.svc.Pipeline(e.ctx, solo.ID)
		require.NoError(t, err)
		require.Equal(t, prism.PrismV1SoloID, p.Protocol.ID, "the trimmed name is looked up")

		list := func(p slots.ListClaimsParams) []slots.Claim {
			t.Helper()
			cs, err := e.claims.ListClaims(e.ctx, p)
			require.NoError(t, err)
			return cs
		}
		require.Equal(t, []slots.Claim{simEthology, sim}, list(slots.ListClaimsParams{Limit: 10, Protocol: "simulation"}))
		require.Equal(t, []slots.Claim{simEthology}, list(slots.ListClaimsParams{Limit: 10, Protocol: "simulation", Domain: "ethology"}))
		require.Equal(t, []slots.Claim{sim}, list(slots.ListClaimsParams{Limit: 10, Protocol: "simulation", Domain: slots.DefaultDomain}))
		require.Equal(t, []slots.Claim{simEthology}, list(slots.ListClaimsParams{Limit: 1, Protocol: "simulation"}))
		require.Equal(t, []slots.Claim{sim}, list(slots.ListClaimsParams{Limit: 10, Protocol: "simulation", Before: simEthology.ID}))
		require.Equal(t, []slots.Claim{none}, list(slots.ListClaimsParams{Limit: 10, Protocol: prism.PrismV1ID}))
		require.Empty(t, list(slots.ListClaimsParams{Limit: 10, Protocol: "Simulation"}), "exact, as the original's filter")
		require.Equal(t, []slots.Claim{plain, simEthology, none, solo, sim}, list(slots.ListClaimsParams{Limit: 10}), "no filter: every claim")

		author := e.ids.Admin()
		_, err = e.slots.AddComment(identity.WithKey(e.ctx, author), slots.NewComment{ClaimID: sim.ID, Body: "a draft", CommentType: string(slots.CommentDraft)})
		require.NoError(t, err)
		sim.CommentCount, sim.UpdatedAt = 1, e.clock.Now()
		require.Equal(t, []slots.Claim{sim, simEthology}, list(slots.ListClaimsParams{Limit: 10, Protocol: "simulation", Order: slots.ClaimTop}), "most commented first")

		// A job answers the claim with its protocol.
		_, err = e.slots.ConfigureSlots(e.ctx, sim.ID, []slots.RoleCount{{Role: slots.RoleCritic, Count: 1}})
		require.NoError(t, err)
		job, err := e.slots.NextJob(e.ctx, slots.JobQuery{})
		require.NoError(t, err)
		require.Equal(t, sim, job.Claim, "the job's claim")
		cj, err := e.slots.ClaimJob(e.ctx, slots.ClaimJobQuery{Pool: 1, Strategy: slots.ClaimLatest, Domain: "ethology"})
		require.NoError(t, err)
		require.Equal(t, simEthology, cj.Claim, "the claim job's claim")

		// The Service trims the filter and bounds it; a claim's protocol
		// is bounded too, and a refused claim leaves nothing.
		page, err := e.slots.Claims(e.ctx, slots.ClaimsQuery{Protocol: " simulation\t"})
		require.NoError(t, err)
		require.Equal(t, []slots.Claim{simEthology, sim}, page.Items)
		long := strings.Repeat("p", slots.MaxProtocolLen+1)
		_, err = e.slots.Claims(e.ctx, slots.ClaimsQuery{Protocol: long})
		requireCode(t, &store.Error{Kind: store.ErrInvalid, Code: "invalid_protocol"}, err)
		_, _, err = e.svc.CreateClaim(e.ctx, prism.NewClaim{NewClaim: slots.NewClaim{Title: "Too long"}, Protocol: long})
		requireCode(t, &store.Error{Kind: store.ErrInvalid, Code: "invalid_protocol"}, err)
		_, _, err = e.svc.CreateClaim(e.ctx, prism.NewClaim{NewClaim: slots.NewClaim{Title: "Not text"}, Protocol: "a\x00b"})
		requireCode(t, &store.Error{Kind: store.ErrInvalid, Code: "invalid_protocol"}, err)
		require.Len(t, list(slots.ListClaimsParams{Limit: 10}), 5, "nothing stored")
	})

	t.Run("ProtocolUses", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 0)
		uses := func(p slots.ProtocolUsesParams) []slots.ProtocolUse {
			t.Helper()
			got, err := e.claims.ProtocolUses(e.ctx, p)
			require.NoError(t, err)
			return got
		}
		require.Empty(t, uses(slots.ProtocolUsesParams{Limit: 10}), "no claim, no name")
		create := func(protocol string) slots.Claim {
			t.Helper()
			c, _, err := e.svc.CreateClaim(e.ctx, prism.NewClaim{NewClaim: slots.NewClaim{Title: "Under " + protocol}, Protocol: protocol})
			require.NoError(t, err)
			return c
		}
		at := func(d time.Duration) time.Time { return e.clock.Now().Add(d) }
		e.clock.Advance(time.Millisecond)
		create("alpha")
		create("beta")
		e.clock.Advance(time.Millisecond)
		alpha := create("alpha")
		e.clock.Advance(time.Millisecond)
		create("gamma") // gamma and delta: one claim each, the same millisecond
		create("delta")
		t3 := at(0)
		e.clock.Advance(time.Millisecond)
		beta := create("beta")
		_, err := e.slots.CreateClaim(e.ctx, slots.NewClaim{Title: "No protocol, not counted"})
		require.NoError(t, err)
		_, _, err = e.svc.CreateClaim(e.ctx, prism.NewClaim{NewClaim: slots.NewClaim{Title: ""}, Protocol: "alpha"})
		require.Error(t, err, "a refused claim")

		want := []slots.ProtocolUse{
			{Name: "beta", Claims: 2, LastUsedAt: beta.CreatedAt},
			{Name: "alpha", Claims: 2, LastUsedAt: alpha.CreatedAt},
			{Name: "delta", Claims: 1, LastUsedAt: t3},
			{Name: "gamma", Claims: 1, LastUsedAt: t3},
		}
		require.Equal(t, want, uses(slots.ProtocolUsesParams{Limit: 10}), "the most claims, then the latest used, then by name")
		require.Equal(t, want[:2], uses(slots.ProtocolUsesParams{Limit: 2}))
		require.Empty(t, uses(slots.ProtocolUsesParams{Limit: 0}))
		require.Equal(t, want[3:], uses(slots.ProtocolUsesParams{Name: "gamma"}))
		require.Empty(t, uses(slots.ProtocolUsesParams{Name: "Gamma"}), "exact")
		require.Empty(t, uses(slots.ProtocolUsesParams{Name: "unused"}))

		// Names tied on claims and last use order by their bytes, whatever
		// a database's collation says ("Zeta" before "alpha", "b-c" before
		// "bb").
		tie := at(time.Hour)
		for _, name := range []string{"apple", "Zeta", "bb", "b-c"} {
			c := slots.Claim{ID: "claim_tie_" + name, Title: name, Domain: slots.DefaultDomain, Sources: []slots.Source{}, CreatedAt: tie, Protocol: name}
			require.NoError(t, e.claims.CreateClaim(e.ctx, c))
		}
		tied := uses(slots.ProtocolUsesParams{Limit: 6})[2:] // after beta's and alpha's two claims
		require.Equal(t, []slots.ProtocolUse{{Name: "Zeta", Claims: 1, LastUsedAt: tie}, {Name: "apple", Claims: 1, LastUsedAt: tie},
			{Name: "b-c", Claims: 1, LastUsedAt: tie}, {Name: "bb", Claims: 1, LastUsedAt: tie}}, tied, "ties by bytes")

		// A claim stored through the store counts as the service's do; one
		// refused for its taken ID counts nothing.
		e.clock.Advance(time.Millisecond)
		direct := slots.Claim{ID: "claim_direct", Title: "Direct", Domain: slots.DefaultDomain, Sources: []slots.Source{}, CreatedAt: at(0), Protocol: "gamma"}
		require.NoError(t, e.claims.CreateClaim(e.ctx, direct))
		require.ErrorIs(t, e.claims.CreateClaim(e.ctx, direct), slots.ErrClaimExists)
		require.Equal(t, []slots.ProtocolUse{{Name: "gamma", Claims: 2, LastUsedAt: direct.CreatedAt}}, uses(slots.ProtocolUsesParams{Name: "gamma"}))
	})

	t.Run("RaceCreateUnderProtocol", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 0)
		// Claims created at once under one protocol, by two processes,
		// while others list it: each claim is listed under it once, with
		// its pipeline, and a listing never answers a claim twice.
		for rep := range raceRepeats {
			protocol := fmt.Sprint("race-", rep)
			const creators = 16
			created := make([]slots.Claim, creators)
			concurrently(creators+4, func(i int) {
				if i >= creators {
					for range 5 {
						cs, err := e.claims.ListClaims(e.ctx, slots.ListClaimsParams{Limit: 100, Protocol: protocol})
						if err != nil {
							t.Error(err)
							return
						}
						seen := map[string]bool{}
						for _, c := range cs {
							if seen[c.ID] || c.Protocol != protocol {
								t.Errorf("listing answered %s twice or under %q", c.ID, c.Protocol)
							}
							seen[c.ID] = true
						}
					}
					return
				}
				svc := e.svc
				if i%2 == 1 {
					svc = e.peer
				}
				c, _, err := svc.CreateClaim(e.ctx, prism.NewClaim{NewClaim: slots.NewClaim{Title: fmt.Sprint("Claim ", i)}, Protocol: protocol})
				if err != nil {
					t.Error(err)
					return
				}
				created[i] = c
			})
			cs, err := e.claims.ListClaims(e.ctx, slots.ListClaimsParams{Limit: 100, Protocol: protocol})
			require.NoError(t, err)
			require.ElementsMatch(t, created, cs, "every claim once")
			u, err := e.claims.ProtocolUses(e.ctx, slots.ProtocolUsesParams{Name: protocol})
			require.NoError(t, err)
			require.Equal(t, []slots.ProtocolUse{{Name: protocol, Claims: creators, LastUsedAt: e.clock.Now()}}, u, "each claim counted once")
			all, err := e.claims.ProtocolUses(e.ctx, slots.ProtocolUsesParams{Limit: raceRepeats + 1})
			require.NoError(t, err)
			var listed []slots.ProtocolUse
			for _, x := range all {
				if x.Name == protocol {
					listed = append(listed, x)
				}
			}
			require.Equal(t, u, listed, "listed once among every name, as counted")
			for _, c := range cs {
				_, err := e.svc.Pipeline(e.ctx, c.ID)
				require.NoError(t, err, "with its pipeline")
			}
		}
	})

	t.Run("ClaimProtocolsFilterPastManyOthers", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 0)
		// The one claim of the domain under the protocol is older than
		// many of another domain under it: a filter of both finds it past
		// them, and pages below it find none.
		e.clock.Advance(time.Millisecond)
		old, _, err := e.svc.CreateClaim(e.ctx, prism.NewClaim{NewClaim: slots.NewClaim{Title: "Old", Domain: "ethology"}, Protocol: "sim"})
		require.NoError(t, err)
		for i := range 130 {
			e.clock.Advance(time.Millisecond)
			_, _, err := e.svc.CreateClaim(e.ctx, prism.NewClaim{NewClaim: slots.NewClaim{Title: fmt.Sprint("New ", i)}, Protocol: "sim"})
			require.NoError(t, err)
		}
		got, err := e.claims.ListClaims(e.ctx, slots.ListClaimsParams{Limit: 5, Protocol: "sim", Domain: "ethology"})
		require.NoError(t, err)
		require.Equal(t, []slots.Claim{old}, got)
		got, err = e.claims.ListClaims(e.ctx, slots.ListClaimsParams{Limit: 5, Protocol: "sim", Domain: "ethology", Before: old.ID})
		require.NoError(t, err)
		require.Empty(t, got)
		got, err = e.claims.ListClaims(e.ctx, slots.ListClaimsParams{Limit: 200, Protocol: "sim"})
		require.NoError(t, err)
		require.Len(t, got, 131)
	})
}
