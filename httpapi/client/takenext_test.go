package client_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
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
		_, err = h.Comment(ctx, claim.ID, client.NewComment{Body: "a draft", CommentType: string(slots.CommentDraft)})
		require.NoError(t, err)

		job, err := a.TakeJob(ctx, slots.JobQuery{Role: slots.RoleCritic, Domain: "biology", Strategy: slots.StrategyRandom})
		require.NoError(t, err)
		require.Equal(t, claim.ID, job.Claim.ID)
		require.Equal(t, slots.StatusTaken, job.Slot.Status)
		require.Equal(t, "A", job.Slot.AgentName)
		require.Equal(t, time.UTC, job.Slot.TakenAt.Location(), "the wire's milliseconds come back as UTC times")
		require.WithinDuration(t, time.Now(), job.Slot.TakenAt, time.Minute)
		require.False(t, job.Slot.TakenAt.Before(job.Slot.CreatedAt))
		require.Equal(t, claim.CreatedAt, job.Claim.CreatedAt.UnixMilli())
		require.Equal(t, "biology", job.Claim.Domain)
		require.Len(t, job.Comments, 1)
		require.Equal(t, slots.CommentDraft, job.Comments[0].CommentType)
		require.Equal(t, "human", job.Comments[0].AgentName)
		require.False(t, job.Comments[0].CreatedAt.IsZero())
		_, err = a.TakeJob(ctx, slots.JobQuery{})
		require.ErrorIs(t, err, store.ErrNotFound, "one seat per agent per claim")
		require.NoError(t, a.Done(ctx, claim.ID, job.Slot.ID))
	})
}

// TestTakeNextJobWithoutTheRoute: against a server without
// POST /api/v1/jobs/slots/take (an older one, or the original protocol's),
// TakeNextJob falls back to the original API's two steps and still takes a seat.
func TestTakeNextJobWithoutTheRoute(t *testing.T) {
	c, refused := withoutRoutes(t, "/api/v1/jobs/slots/take")
	ctx := t.Context()
	a, claims := workQueue(t, c, 1)
	job, err := a.TakeNextJob(ctx, slots.JobQuery{}, 100*time.Millisecond)
	require.NoError(t, err)
	require.EqualValues(t, 1, refused.Load())
	list, err := a.Slots(ctx, claims[0])
	require.NoError(t, err)
	require.Equal(t, job.Slot.ID, list[0].ID)
	require.Equal(t, string(slots.StatusTaken), list[0].Status)
	require.Equal(t, "A", list[0].AgentName)
}

// withoutRoutes serves a client (as the admin) from a server that answers
// 404 route_not_found for every path ending in one of suffixes, as one
// older than those routes would, and counts the refusals.
func withoutRoutes(t *testing.T, suffixes ...string) (*client.Client, *atomic.Int32) {
	st := testbackend.All()[0].New(t)
	target, err := url.Parse(serve(t, st, st.Notifier))
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	refused := &atomic.Int32{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, s := range suffixes {
			if strings.HasSuffix(r.URL.Path, s) {
				refused.Add(1)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusNotFound)
				_, _ = w.Write([]byte(`{"error":{"code":"route_not_found","message":"no such route"}}`))
				return
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return client.New(srv.URL, client.WithToken(admin)), refused
}

// workQueue makes n claims with a draft and one critic seat each, and an
// agent A to work them.
func workQueue(t *testing.T, c *client.Client, n int) (a *client.Client, claims []string) {
	ctx := t.Context()
	h := agent(t, c, "human", slots.ScopeClaimCreate, slots.ScopeSlotsConfigure, slots.ScopeCommentCreate)
	for range n {
		claim, err := h.CreateClaim(ctx, client.NewClaim{Title: "t", Body: "b", Domain: "d"})
		require.NoError(t, err)
		_, err = h.ConfigureSlots(ctx, claim.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 1})
		require.NoError(t, err)
		_, err = h.Comment(ctx, claim.ID, client.NewComment{Body: "a draft", CommentType: string(slots.CommentDraft)})
		require.NoError(t, err)
		claims = append(claims, claim.ID)
	}
	return agent(t, c, "A", slots.ScopeCommentCreate), claims
}

// workThrough takes a's first seat and loops DoneAndTakeJob until no seat
// is left: it must visit claims in order, each once, and be credited for
// each.
func workThrough(t *testing.T, a *client.Client, claims []string) {
	ctx := t.Context()
	job, err := a.TakeJob(ctx, slots.JobQuery{})
	require.NoError(t, err)
	var visited []string
	for {
		visited = append(visited, job.Claim.ID)
		next, err := a.DoneAndTakeJob(ctx, job.Claim.ID, job.Slot.ID, slots.JobQuery{})
		require.NoError(t, err)
		if next == nil {
			break
		}
		require.Equal(t, slots.StatusTaken, next.Slot.Status)
		require.Equal(t, "A", next.Slot.AgentName)
		job = *next
	}
	require.Equal(t, claims, visited)
	me, err := a.Me(ctx)
	require.NoError(t, err)
	require.EqualValues(t, int64(len(claims))*slots.RewardRoleSlot, me.Balance)
	_, err = a.DoneAndTakeJob(ctx, job.Claim.ID, job.Slot.ID, slots.JobQuery{})
	require.ErrorIs(t, err, store.ErrInvalid, "done once (400 slot_not_taken, as the original answers it)")
}

// TestDoneAndTakeJob: one request per seat, on every backend.
func TestDoneAndTakeJob(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		a, claims := workQueue(t, setup(t, st), 3)
		workThrough(t, a, claims)
	})
}

// TestDoneAndTakeJobWithoutTheRoutes: against a server without the route,
// DoneAndTakeJob falls back to Done and TakeJob, and without that one too,
// to the original API's NextJob and Take.
func TestDoneAndTakeJobWithoutTheRoutes(t *testing.T) {
	c, refused := withoutRoutes(t, "/done-and-take")
	a, claims := workQueue(t, c, 3)
	workThrough(t, a, claims)
	require.EqualValues(t, 4, refused.Load())

	c, refused = withoutRoutes(t, "/done-and-take", "/jobs/slots/take")
	a, claims = workQueue(t, c, 3)
	job, err := a.TakeNextJob(t.Context(), slots.JobQuery{}, 100*time.Millisecond)
	require.NoError(t, err)
	require.Equal(t, claims[0], job.Claim.ID)
	next, err := a.DoneAndTakeJob(t.Context(), job.Claim.ID, job.Slot.ID, slots.JobQuery{})
	require.NoError(t, err)
	require.Equal(t, claims[1], next.Claim.ID)
	require.Equal(t, slots.StatusOpen, next.Slot.Status, "as the original API's queue showed it before the Take")
	list, err := a.Slots(t.Context(), claims[1])
	require.NoError(t, err)
	require.Equal(t, string(slots.StatusTaken), list[0].Status)
	require.Equal(t, "A", list[0].AgentName)
	require.EqualValues(t, 3, refused.Load())
}

// TestTakeWork: one request finds and takes the agent's next stage slot,
// and TakeNextWork takes the same path, or the two steps on a server
// without the route.
func TestTakeWork(t *testing.T) {
	for _, missing := range []bool{false, true} {
		t.Run(fmt.Sprint("without=", missing), func(t *testing.T) {
			ctx := t.Context()
			var suffixes []string
			if missing {
				suffixes = []string{"/jobs/work/take"}
			}
			c, refused := withoutRoutes(t, suffixes...)
			h := agent(t, c, "human", slots.ScopeClaimCreate)
			a := agent(t, c, "A", slots.ScopeCommentCreate)
			claim, err := h.CreateClaim(ctx, client.NewClaim{Title: "Crows plan ahead", Body: "b"})
			require.NoError(t, err)
			if !missing {
				w, err := a.TakeWork(ctx, client.WorkQuery{Layer: new(2)})
				require.ErrorIs(t, err, store.ErrNotFound)
				require.Zero(t, w.Slot.ID)
				w, err = a.TakeWork(ctx, client.WorkQuery{Layer: new(1)})
				require.NoError(t, err)
				require.Equal(t, claim.ID, w.Claim.ID)
				require.Equal(t, string(slots.StatusTaken), w.Slot.Status)
				require.Equal(t, "A", w.Slot.AgentName)
			}
			b := agent(t, c, "B", slots.ScopeCommentCreate)
			w, err := b.TakeNextWork(ctx, client.WorkQuery{Layer: new(1)}, 50*time.Millisecond)
			require.NoError(t, err)
			p, err := b.Pipeline(ctx, claim.ID)
			require.NoError(t, err)
			held := 0
			for _, s := range p.Slots {
				if s.ID == w.Slot.ID {
					require.Equal(t, "B", s.AgentName)
				}
				if s.AgentName != "" {
					held++
				}
			}
			if missing {
				require.EqualValues(t, 1, refused.Load())
				require.Equal(t, 1, held)
			} else {
				require.Zero(t, refused.Load())
				require.Equal(t, 2, held)
			}
		})
	}
}
