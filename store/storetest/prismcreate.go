package storetest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// failingPipelines is a prism.Store whose CreateClaimPipeline fails as an
// unreachable backend would.
type failingPipelines struct{ prism.Store }

var errInjected = fmt.Errorf("storetest: injected: %w", store.ErrUnavailable)

func (failingPipelines) CreateClaimPipeline(context.Context, slots.Claim, prism.Pipeline) error {
	return errInjected
}

// runPrismCreateClaim pins prism.Service.CreateClaim and the store's
// CreateClaimPipeline: a claim created with a pipeline never stands
// without it, whatever fails and whoever reads meanwhile.
func runPrismCreateClaim(t *testing.T, newStores NewStores) {
	t.Run("CreateClaimWithPipeline", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 0)
		c, p, err := e.svc.CreateClaim(e.ctx, prism.NewClaim{NewClaim: slots.NewClaim{Title: " Crows plan ahead ", Domain: "biology"}, Protocol: prism.LensV1ID})
		require.NoError(t, err)
		require.Equal(t, "Crows plan ahead", c.Title, "checked as slots checks a claim")
		require.Equal(t, e.clock.Now(), c.CreatedAt)
		got, err := e.slots.Claim(e.ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, c, got)
		stored, err := e.svc.Pipeline(e.ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, p.Version, stored.Version)
		require.Equal(t, prism.LensV1ID, stored.Protocol.ID)
		require.Equal(t, "biology", stored.Domain)
		w, err := e.svc.NextWork(identity.WithKey(e.ctx, identity.Key{ID: "reader"}), prism.WorkQuery{Domain: "biology"})
		require.NoError(t, err, "the work index has the new pipeline's slots")
		require.Equal(t, c.ID, w.Claim.ID)

		count := func() int {
			t.Helper()
			page, err := e.slots.Claims(e.ctx, slots.ClaimsQuery{Limit: slots.MaxClaimsLimit})
			require.NoError(t, err)
			return len(page.Items)
		}
		_, other, err := e.svc.CreateClaim(e.ctx, prism.NewClaim{NewClaim: slots.NewClaim{Title: "y"}, Protocol: "lens-v2"})
		require.NoError(t, err, "a protocol no one registered runs the default, as the original's")
		require.Equal(t, prism.PrismV1ID, other.Protocol.ID)
		_, _, err = e.svc.CreateClaim(e.ctx, prism.NewClaim{NewClaim: slots.NewClaim{Title: " "}})
		require.ErrorIs(t, err, store.ErrInvalid)
		failing := prism.New(failingPipelines{e.store}, e.claims, prism.WithClock(e.clock.Now))
		_, _, err = failing.CreateClaim(e.ctx, prism.NewClaim{NewClaim: slots.NewClaim{Title: "x"}})
		require.ErrorIs(t, err, errInjected)
		require.Equal(t, 2, count(), "a refused or failed create leaves no claim; the two made stand")

		// The store refuses a taken claim ID and writes no pipeline for it.
		plain, err := e.slots.CreateClaim(e.ctx, slots.NewClaim{Title: "no pipeline"})
		require.NoError(t, err)
		dup := plain
		dup.Title = "again"
		p.ClaimID = plain.ID
		require.ErrorIs(t, e.store.CreateClaimPipeline(e.ctx, dup, p), slots.ErrClaimExists)
		_, err = e.store.GetPipeline(e.ctx, plain.ID)
		require.ErrorIs(t, err, prism.ErrPipelineNotFound)
		got, err = e.slots.Claim(e.ctx, plain.ID)
		require.NoError(t, err)
		require.Equal(t, plain, got)
	})

	t.Run("RaceClaimSeenWithItsPipeline", func(t *testing.T) {
		t.Parallel()
		e := newPrismEnv(t, newStores, 0)
		const writers, each = 4, 15
		var done atomic.Bool
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for i := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range each {
					if _, _, err := e.svc.CreateClaim(e.ctx, prism.NewClaim{NewClaim: slots.NewClaim{Title: fmt.Sprint("claim ", i, "-", j)}}); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		go func() { wg.Wait(); done.Store(true) }()
		for {
			finished := done.Load()
			page, err := e.slots.Claims(e.ctx, slots.ClaimsQuery{Limit: slots.MaxClaimsLimit})
			require.NoError(t, err)
			for _, c := range page.Items {
				_, err := e.store.GetPipeline(e.ctx, c.ID)
				require.NoError(t, err, "claim %s is visible without its pipeline", c.ID)
			}
			if finished {
				select {
				case err := <-errs:
					require.NoError(t, err)
				default:
				}
				require.Len(t, page.Items, writers*each)
				break
			}
		}
	})
}
