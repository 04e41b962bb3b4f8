package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/httpapi/client"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
	"github.com/agorahq/agora/store/memstore"
)

const admin = "admin-token"

func server(t *testing.T) *client.Client {
	t.Helper()
	svc := slots.New(memstore.New(), slots.WithAdminKey(admin))
	mux := http.NewServeMux()
	mux.Handle("/api/v1/", httpapi.AOP(svc))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return client.New(srv.URL, client.WithToken(admin))
}

// TestAgentLoop runs the agent loop of slots.md through the client, with
// more agents than seats racing for them.
func TestAgentLoop(t *testing.T) {
	ctx := context.Background()
	c := server(t)
	human, err := c.CreateKey(ctx, "human", slots.ScopeClaimCreate, slots.ScopeSlotsConfigure, slots.ScopeCommentCreate)
	require.NoError(t, err)
	h := c.As(human.Token)
	claim, err := h.CreateClaim(ctx, "Crows plan ahead", "Scrub jays cache food.", "biology", "")
	require.NoError(t, err)
	n, err := h.ConfigureSlots(ctx, claim.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 3})
	require.NoError(t, err)
	require.Equal(t, 3, n)
	_, err = h.Comment(ctx, claim.ID, "a draft", slots.CommentDraft)
	require.NoError(t, err)

	var agents []*client.Client
	for i := 0; i < 6; i++ {
		k, err := c.CreateKey(ctx, fmt.Sprint("agent-", i), slots.ScopeCommentCreate)
		require.NoError(t, err)
		agents = append(agents, c.As(k.Token))
	}
	var mu sync.Mutex
	won := 0
	var wg sync.WaitGroup
	for _, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			job, err := a.TakeNextJob(ctx, slots.JobQuery{Role: slots.RoleCritic}, 200*time.Millisecond)
			if err != nil {
				return // no seat left for this one
			}
			if _, err := a.Comment(ctx, job.Claim.ID, "which cohorts?", job.Slot.Role.CommentType()); err != nil {
				t.Error(err)
			}
			if err := a.Done(ctx, job.Claim.ID, job.Slot.ID); err != nil {
				t.Error(err)
			}
			mu.Lock()
			won++
			mu.Unlock()
		}()
	}
	wg.Wait()
	require.Equal(t, 3, won, "three seats, three winners")
	list, err := h.Slots(ctx, claim.ID)
	require.NoError(t, err)
	for _, s := range list {
		require.Equal(t, slots.StatusDone, s.Status)
	}
	total := int64(0)
	for _, a := range agents {
		me, err := a.Me(ctx)
		require.NoError(t, err)
		total += me.Balance
	}
	require.EqualValues(t, 3*slots.RewardRoleSlot, total)
}

func TestErrorsMatchTheSentinels(t *testing.T) {
	ctx := context.Background()
	c := server(t)
	_, err := c.Claim(ctx, "claim_missing")
	require.ErrorIs(t, err, store.ErrNotFound)
	var e *client.Error
	require.True(t, errors.As(err, &e))
	require.Equal(t, "claim_not_found", e.Code)
	_, err = c.As("bad").Me(ctx)
	require.ErrorIs(t, err, store.ErrUnauthorized)
	k, err := c.CreateKey(ctx, "plain")
	require.NoError(t, err)
	_, err = c.As(k.Token).CreateClaim(ctx, "t", "", "", "")
	require.ErrorIs(t, err, store.ErrForbidden)
	claim, err := c.CreateClaim(ctx, "t", "", "", "")
	require.NoError(t, err)
	_, err = c.ConfigureSlots(ctx, claim.ID, slots.RoleCount{Role: "judge", Count: 1})
	require.ErrorIs(t, err, store.ErrInvalid)
	_, err = c.ConfigureSlots(ctx, claim.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 1})
	require.NoError(t, err)
	list, _ := c.Slots(ctx, claim.ID)
	require.NoError(t, c.Take(ctx, claim.ID, list[0].ID))
	err = c.As(k.Token).Take(ctx, claim.ID, list[0].ID)
	require.ErrorIs(t, err, store.ErrForbidden, "plain has no comment:create")
	keys, err := c.Keys(ctx)
	require.NoError(t, err)
	require.Len(t, keys, 1)
	require.NoError(t, c.RevokeKey(ctx, k.Key.ID))
	_, err = c.As(k.Token).Me(ctx)
	require.ErrorIs(t, err, store.ErrUnauthorized)
}

func TestPrismThroughTheClient(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	svc := slots.New(st, slots.WithAdminKey(admin))
	mux := http.NewServeMux()
	mux.Handle("/api/v1/", httpapi.AOP(svc, httpapi.WithPrism(prism.New(st, st))))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c := client.New(srv.URL, client.WithToken(admin))
	claim, err := c.CreateClaim(ctx, "t", "b", "", "")
	require.NoError(t, err)
	p, err := c.Pipeline(ctx, claim.ID)
	require.NoError(t, err)
	require.Equal(t, prism.PhaseWork, p.Phase)
	for i := 0; i < 2; i++ {
		k, err := c.CreateKey(ctx, fmt.Sprint("w", i), slots.ScopeCommentCreate)
		require.NoError(t, err)
		a := c.As(k.Token)
		w, err := a.NextWork(ctx, "contributor", 1, "")
		require.NoError(t, err)
		require.NoError(t, a.TakeStage(ctx, w.Claim.ID, w.Slot.ID))
		conf := 0.9
		require.NoError(t, a.FinishStage(ctx, w.Claim.ID, w.Slot.ID, "framing", nil, &conf))
	}
	p, err = c.Pipeline(ctx, claim.ID)
	require.NoError(t, err)
	require.Equal(t, prism.PhaseConsensus, p.Phase)
	_, err = c.Consensus(ctx, claim.ID)
	require.ErrorIs(t, err, store.ErrNotFound)
}
