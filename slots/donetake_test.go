package slots_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/memstore"
)

// flushSpy counts the FinishAndTakeNextSlots calls in flight at once and
// the items they carried; each call lingers a little so that others can
// pile up behind it.
type flushSpy struct {
	slots.Store
	mu                  sync.Mutex
	inflight, most, sum int
}

func (s *flushSpy) FinishAndTakeNextSlots(ctx context.Context, ps []slots.FinishTakeParams) ([]slots.FinishTakeResult, error) {
	s.mu.Lock()
	s.inflight++
	s.most = max(s.most, s.inflight)
	s.sum += len(ps)
	s.mu.Unlock()
	time.Sleep(5 * time.Millisecond)
	defer func() { s.mu.Lock(); s.inflight--; s.mu.Unlock() }()
	return s.Store.FinishAndTakeNextSlots(ctx, ps)
}

// TestBatchFlushers: WithBatchFlushers bounds the batches in flight, and
// every DoneAndTakeNext is still answered with its own seat.
func TestBatchFlushers(t *testing.T) {
	for _, flushers := range []int{1, 2} {
		t.Run(fmt.Sprint(flushers), func(t *testing.T) {
			ctx := context.Background()
			spy := &flushSpy{Store: memstore.New()}
			svc := slots.New(spy, slots.WithBatchFlushers(flushers), slots.WithDoneBatching(0))
			const n = 12
			keys, jobs := make([]identity.Key, n), make([]slots.Job, n)
			for i := range n {
				c, err := svc.CreateClaim(ctx, slots.NewClaim{Title: "t", Body: "b"})
				require.NoError(t, err)
				_, err = svc.AddComment(identity.WithKey(ctx, identity.Key{ID: "drafter"}), slots.NewComment{ClaimID: c.ID, Body: "d", CommentType: "draft"})
				require.NoError(t, err)
				_, err = svc.ConfigureSlots(ctx, c.ID, []slots.RoleCount{{Role: slots.RoleCritic, Count: 2}})
				require.NoError(t, err)
				keys[i] = identity.Key{ID: fmt.Sprint("key_w", i), Name: fmt.Sprint("w", i), Scopes: []identity.Scope{slots.ScopeCommentCreate}}
				jobs[i], err = svc.TakeNext(identity.WithKey(ctx, keys[i]), slots.JobQuery{})
				require.NoError(t, err)
			}
			var wg sync.WaitGroup
			next := make([]slots.DoneNext, n)
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var err error
					next[i], err = svc.DoneAndTakeNext(identity.WithKey(ctx, keys[i]), jobs[i].Claim.ID, jobs[i].Slot.ID, slots.JobQuery{})
					require.NoError(t, err)
				}()
			}
			wg.Wait()
			require.Equal(t, n, spy.sum, "every call went in a batch once")
			require.LessOrEqual(t, spy.most, flushers, "batches in flight at once")
			seen := map[string]bool{}
			for i, dn := range next {
				require.Equal(t, jobs[i].Slot.ID, dn.Slot.ID)
				require.Equal(t, slots.StatusDone, dn.Slot.Status)
				require.NotNil(t, dn.Next, "a seat is left for everyone")
				require.Equal(t, keys[i].ID, dn.Next.Slot.APIKeyID)
				require.False(t, seen[dn.Next.Slot.ID])
				seen[dn.Next.Slot.ID] = true
			}
		})
	}
}
