package client_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/httpapi/client"
	"github.com/agorahq/agora/internal/testbackend"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
	"github.com/agorahq/agora/store/storetest"
)

// TestTakeJob: one request finds and takes the agent's next seat; the
// claim it holds is not offered again.
func TestTakeJob(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		ctx := t.Context()
		c := setup(t, st)
		h := agent(t, c, "human", slots.ScopeClaimCreate, slots.ScopeSlotsConfigure, slots.ScopeCommentCreate)
		a := agent(t, c, "A", slots.ScopeCommentCreate)
		claim, err := h.CreateClaim(ctx, client.NewClaim{Title: "Crows plan ahead", Body: "Scrub jays cache food.", Domain: "biology"})
		require.NoError(t, err)
		_, err = h.ConfigureSlots(ctx, claim.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 2})
		require.NoError(t, err)
		_, err = a.TakeJob(ctx, slots.JobQuery{})
		require.ErrorIs(t, err, store.ErrNotFound, "no draft yet")
		_, err = h.Comment(ctx, claim.ID, "a draft", slots.CommentDraft)
		require.NoError(t, err)

		job, err := a.TakeJob(ctx, slots.JobQuery{Role: slots.RoleCritic, Domain: "biology", Strategy: slots.StrategyRandom})
		require.NoError(t, err)
		require.Equal(t, claim.ID, job.Claim.ID)
		require.Equal(t, slots.StatusTaken, job.Slot.Status)
		require.Equal(t, "A", job.Slot.AgentName)
		_, err = a.TakeJob(ctx, slots.JobQuery{})
		require.ErrorIs(t, err, store.ErrNotFound, "one seat per agent per claim")
		require.NoError(t, a.Done(ctx, claim.ID, job.Slot.ID))
	})
}

// TestTakeNextJobWithoutTheRoute: against a server without
// POST /api/v1/jobs/slots/take (an older one, or the original protocol's),
// TakeNextJob falls back to the seeds' two steps and still takes a seat.
func TestTakeNextJobWithoutTheRoute(t *testing.T) {
	st := testbackend.All()[0].New(t)
	target, err := url.Parse(serve(t, st, st.Notifier))
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var refused atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v1/jobs/slots/take" {
			refused.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":{"code":"route_not_found","message":"no such route"}}`))
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	ctx := t.Context()
	c := client.New(srv.URL, client.WithToken(admin))
	h := agent(t, c, "human", slots.ScopeClaimCreate, slots.ScopeSlotsConfigure, slots.ScopeCommentCreate)
	a := agent(t, c, "A", slots.ScopeCommentCreate)
	claim, err := h.CreateClaim(ctx, client.NewClaim{Title: "t", Body: "b", Domain: "d"})
	require.NoError(t, err)
	_, err = h.ConfigureSlots(ctx, claim.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 1})
	require.NoError(t, err)
	_, err = h.Comment(ctx, claim.ID, "a draft", slots.CommentDraft)
	require.NoError(t, err)

	job, err := a.TakeNextJob(ctx, slots.JobQuery{}, 100*time.Millisecond)
	require.NoError(t, err)
	require.EqualValues(t, 1, refused.Load())
	list, err := a.Slots(ctx, claim.ID)
	require.NoError(t, err)
	require.Equal(t, job.Slot.ID, list[0].ID)
	require.Equal(t, slots.StatusTaken, list[0].Status)
	require.Equal(t, "A", list[0].AgentName)
}
