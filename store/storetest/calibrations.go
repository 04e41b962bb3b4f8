package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// scores is a calibration's input of domain and score pairs.
func scores(pairs ...any) []slots.NewCalibrationScore {
	out := []slots.NewCalibrationScore{}
	for i := 0; i+1 < len(pairs); i += 2 {
		var f float64
		switch v := pairs[i+1].(type) {
		case int:
			f = float64(v)
		case float64:
			f = v
		}
		out = append(out, slots.NewCalibrationScore{Domain: pairs[i].(string), Score: f})
	}
	return out
}

// requireDomainJobs asserts that the claim's domain is want, and that the
// claim is found under want, and under none of others, by the claims
// listing, the claim jobs and the job queue (when it has an open slot
// there: open).
func (e *slotsEnv) requireDomainJobs(claimID, want string, open bool, others ...string) {
	t := e.t
	t.Helper()
	c, err := e.svc.Claim(e.ctx, claimID)
	require.NoError(t, err)
	require.Equal(t, want, c.Domain)
	page, err := e.svc.Claims(e.ctx, slots.ClaimsQuery{Domain: want})
	require.NoError(t, err)
	require.Contains(t, claimIDs(page.Items), claimID, "listed under %s", want)
	cj, err := e.svc.ClaimJob(e.ctx, slots.ClaimJobQuery{Domain: want, Pool: 100, Strategy: slots.ClaimLatest})
	require.NoError(t, err)
	require.Equal(t, want, cj.Claim.Domain)
	job, err := e.svc.NextJob(e.ctx, slots.JobQuery{Domain: want})
	if open {
		require.NoError(t, err, "a job under %s", want)
		require.Equal(t, claimID, job.Claim.ID)
		require.Equal(t, c, job.Claim, "the job's claim as it is now")
	} else {
		requireCode(t, slots.ErrNoJob, err, "no job under %s", want)
	}
	for _, d := range others {
		page, err := e.svc.Claims(e.ctx, slots.ClaimsQuery{Domain: d})
		require.NoError(t, err)
		require.NotContains(t, claimIDs(page.Items), claimID, "not listed under %s", d)
		job, err := e.svc.NextJob(e.ctx, slots.JobQuery{Domain: d})
		if err == nil {
			require.NotEqual(t, claimID, job.Claim.ID, "no job under %s", d)
		} else {
			requireCode(t, slots.ErrNoJob, err, "no job under %s", d)
		}
	}
}

func claimIDs(cs []slots.Claim) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

// runCalibrations runs the calibrations of the slots section:
// AddCalibration and ListCalibrations through Service.Calibrate and
// Service.Calibrations.
func runCalibrations(t *testing.T, newStores NewStores) {
	t.Run("Calibrations", func(t *testing.T) {
		t.Parallel()
		e := newSlotsEnv(t, newStores)
		c := e.claim("")
		list, err := e.svc.Calibrations(e.ctx, c.ID, 0)
		require.NoError(t, err)
		require.Equal(t, []slots.Calibration{}, list, "none yet: an empty list")

		first := e.agent("First")
		one, err := e.svc.Calibrate(identity.WithKey(e.ctx, first), c.ID,
			scores(" statistics ", 59.6, "information-theory", 40.4, "unscored", 0, "  ", 30))
		require.NoError(t, err)
		require.NotEmpty(t, one.ID)
		require.Equal(t, slots.Calibration{ID: one.ID, ClaimID: c.ID, Total: 100, EditorID: first.ID, EditorName: "First", CreatedAt: e.clock.Now(),
			Scores: []slots.CalibrationScore{{Domain: "statistics", Score: 60}, {Domain: "information-theory", Score: 40}}}, one)
		got, err := e.svc.Claim(e.ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, "statistics", got.Domain)

		e.clock.Advance(time.Millisecond)
		second := e.agent("Second")
		two, err := e.svc.Calibrate(identity.WithKey(e.ctx, second), c.ID, scores("logic", 50, "ethics", 50))
		require.NoError(t, err)
		require.Equal(t, "logic", two.TopDomain(), "the first of the top scores")
		got, err = e.svc.Claim(e.ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, "logic", got.Domain)

		for _, limit := range []int{0, -5, 2, 20, 1000} {
			list, err = e.svc.Calibrations(e.ctx, c.ID, limit)
			require.NoError(t, err)
			require.Equal(t, []slots.Calibration{two, one}, list, "limit %d: newest first, as stored", limit)
		}
		list, err = e.svc.Calibrations(e.ctx, c.ID, 1)
		require.NoError(t, err)
		require.Equal(t, []slots.Calibration{two}, list)
		list, err = e.svc.Store().ListCalibrations(e.ctx, c.ID, 0)
		require.NoError(t, err)
		require.Empty(t, list, "the store lists no more than it is asked for")

		// A refused calibration stores nothing and leaves the domain.
		_, err = e.svc.Calibrate(identity.WithKey(e.ctx, first), c.ID, scores("physics", 99))
		requireCode(t, &store.Error{Kind: store.ErrInvalid, Code: slots.CodeCalibrationFailed}, err)
		list, err = e.svc.Calibrations(e.ctx, c.ID, 0)
		require.NoError(t, err)
		require.Len(t, list, 2)
		got, err = e.svc.Claim(e.ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, "logic", got.Domain)

		// The caller is a key.
		_, err = e.svc.Calibrate(e.ctx, c.ID, scores("physics", 100))
		require.ErrorIs(t, err, identity.ErrMissingToken)
	})

	t.Run("CalibrationsUnknownClaim", func(t *testing.T) {
		t.Parallel()
		e := newSlotsEnv(t, newStores)
		k := e.agent("K")
		_, err := e.svc.Calibrate(identity.WithKey(e.ctx, k), "claim_missing", scores("physics", 100))
		requireCode(t, slots.ErrClaimNotFound, err)
		_, err = e.svc.Calibrations(e.ctx, "claim_missing", 0)
		requireCode(t, slots.ErrClaimNotFound, err)
		err = e.store.AddCalibration(e.ctx, slots.Calibration{ID: "calibration_x", ClaimID: "claim_missing",
			Scores: []slots.CalibrationScore{{Domain: "physics", Score: 100}}, Total: 100, EditorID: k.ID, EditorName: k.Name, CreatedAt: e.clock.Now()})
		requireCode(t, slots.ErrClaimNotFound, err)
		_, err = e.store.ListCalibrations(e.ctx, "claim_missing", 5)
		requireCode(t, slots.ErrClaimNotFound, err)
		page, err := e.svc.Claims(e.ctx, slots.ClaimsQuery{Domain: "physics"})
		require.NoError(t, err)
		require.Empty(t, page.Items, "no claim appeared under the domain")
	})

	t.Run("CalibrateWritesTheDomain", func(t *testing.T) {
		t.Parallel()
		e := newSlotsEnv(t, newStores)
		calibrator := identity.WithKey(e.ctx, e.agent("Calibrator"))
		c := e.claim("")
		e.configure(c.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 2})
		e.draft(c.ID)
		e.requireDomainJobs(c.ID, slots.DefaultDomain, true, "statistics")

		_, err := e.svc.Calibrate(calibrator, c.ID, scores("logic", 30, "statistics", 70))
		require.NoError(t, err)
		e.requireDomainJobs(c.ID, "statistics", true, slots.DefaultDomain, "logic")
		for name, q := range map[string]slots.JobQuery{"by role": {Domain: "statistics", Role: slots.RoleCritic},
			"at random": {Domain: "statistics", Strategy: slots.StrategyRandom}} {
			job, err := e.svc.NextJob(e.ctx, q)
			require.NoError(t, err, name)
			require.Equal(t, c.ID, job.Claim.ID, name)
		}

		// A take's job carries the new domain; the other slot stays
		// offered under it.
		job, err := e.svc.TakeNext(identity.WithKey(e.ctx, e.agent("Taker")), slots.JobQuery{Domain: "statistics"})
		require.NoError(t, err)
		require.Equal(t, "statistics", job.Claim.Domain)
		e.requireDomainJobs(c.ID, "statistics", true, slots.DefaultDomain)

		// Slots configured after the calibration are offered under its
		// domain; a later calibration moves them, and back again.
		e.configure(c.ID, slots.RoleCount{Role: slots.RoleAnswerer, Count: 1})
		job, err = e.svc.NextJob(e.ctx, slots.JobQuery{Domain: "statistics", Role: slots.RoleAnswerer})
		require.NoError(t, err)
		require.Equal(t, c.ID, job.Claim.ID)
		_, err = e.svc.Calibrate(calibrator, c.ID, scores("logic", 100))
		require.NoError(t, err)
		e.requireDomainJobs(c.ID, "logic", true, "statistics", slots.DefaultDomain)
		_, err = e.svc.Calibrate(calibrator, c.ID, scores("statistics", 100))
		require.NoError(t, err)
		e.requireDomainJobs(c.ID, "statistics", true, "logic")

		// A claim without a draft is not in the job queue under any
		// domain; its first draft puts it there under its calibrated one.
		d := e.claim("")
		e.configure(d.ID, slots.RoleCount{Role: slots.RoleDefender, Count: 1})
		_, err = e.svc.Calibrate(calibrator, d.ID, scores("law", 100))
		require.NoError(t, err)
		e.requireDomainJobs(d.ID, "law", false, slots.DefaultDomain)
		e.draft(d.ID)
		e.requireDomainJobs(d.ID, "law", true, slots.DefaultDomain)
	})

	t.Run("RaceCalibrate", func(t *testing.T) {
		t.Parallel()
		const writers, each = 8, 3
		e := newSlotsEnv(t, newStores)
		c := e.claim("")
		e.configure(c.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 1})
		e.draft(c.ID)
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			made = map[string]slots.Calibration{}
			errs = make(chan error, writers*each)
		)
		for w := range writers {
			ctx := identity.WithKey(e.ctx, e.agent(fmt.Sprint("writer", w)))
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					cal, err := e.svc.Calibrate(ctx, c.ID, scores("shared", 40, fmt.Sprintf("top-%d-%d", w, i), 60))
					errs <- err
					mu.Lock()
					made[cal.ID] = cal
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		list, err := e.svc.Calibrations(e.ctx, c.ID, slots.MaxCalibrationsLimit)
		require.NoError(t, err)
		require.Len(t, list, writers*each, "every calibration kept")
		for _, cal := range list {
			require.Equal(t, made[cal.ID], cal, "each once, as it was made")
			delete(made, cal.ID)
		}
		// Newest first: each writer's calibrations in the reverse of the
		// order it made them.
		for w := range writers {
			var mine []string
			for _, cal := range list {
				if cal.EditorName == fmt.Sprint("writer", w) {
					mine = append(mine, cal.TopDomain())
				}
			}
			want := []string{}
			for i := range each {
				want = append(want, fmt.Sprintf("top-%d-%d", w, i))
			}
			slices.Reverse(want)
			require.Equal(t, want, mine, "writer %d", w)
		}
		// The claim's domain is the top domain of the calibration stored
		// last, the first listed, and only that domain offers its job.
		final := list[0].TopDomain()
		var others []string
		for _, cal := range list[1:] {
			others = append(others, cal.TopDomain())
		}
		e.requireDomainJobs(c.ID, final, true, append(others, "shared", slots.DefaultDomain)...)
	})

	t.Run("RaceCalibrateAndConfigure", func(t *testing.T) {
		t.Parallel()
		const rounds, seats = 6, 3
		e := newSlotsEnv(t, newStores)
		calibrator := identity.WithKey(e.ctx, e.agent("Calibrator"))
		c := e.claim("")
		e.draft(c.ID)
		var wg sync.WaitGroup
		errs := make(chan error, 2*rounds)
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := range rounds {
				_, err := e.svc.Calibrate(calibrator, c.ID, scores(fmt.Sprint("d", i), 100))
				errs <- err
			}
		}()
		go func() {
			defer wg.Done()
			for range rounds {
				_, err := e.svc.ConfigureSlots(e.ctx, c.ID, []slots.RoleCount{{Role: slots.RoleCritic, Count: seats}})
				errs <- err
			}
		}()
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		got, err := e.svc.Claim(e.ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, fmt.Sprint("d", rounds-1), got.Domain)
		// Every open slot, whenever it was configured, is offered under
		// the claim's domain: one seat to each of seats agents.
		for i := range seats {
			job, err := e.svc.TakeNext(identity.WithKey(e.ctx, e.agent(fmt.Sprint("taker", i))), slots.JobQuery{Domain: got.Domain})
			require.NoError(t, err, "seat %d", i)
			require.Equal(t, c.ID, job.Claim.ID)
		}
		_, err = e.svc.NextJob(e.ctx, slots.JobQuery{})
		requireCode(t, slots.ErrNoJob, err, "no slot left under another domain")
	})
}
