package prism_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/memstore"
)

// failingReads is a store whose pipeline reads fail with err.
type failingReads struct {
	*memstore.Store
	err error
}

func (f failingReads) GetPipeline(context.Context, string) (prism.Pipeline, error) {
	return prism.Pipeline{}, f.err
}

// A pipeline the work index names but that cannot be read is the store's
// failure, not "no work": NextWork answers the error (a cancelled request
// its cancellation), where passing over it would answer ErrNoJob, a 404.
func TestNextWorkReportsAFailedRead(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	c, _, err := prism.New(st, st).CreateClaim(ctx, prism.NewClaim{NewClaim: slots.NewClaim{Title: "Crows plan ahead"}})
	require.NoError(t, err)
	broken := errors.New("backend unreachable")
	svc := prism.New(failingReads{st, broken}, st)
	agent := identity.WithKey(ctx, identity.Key{ID: "agent"})
	_, err = svc.NextWork(agent, prism.WorkQuery{})
	require.ErrorIs(t, err, broken)
	_, err = svc.TakeNextWork(agent, prism.WorkQuery{})
	require.ErrorIs(t, err, broken)
	svc = prism.New(failingReads{st, prism.ErrPipelineNotFound}, st)
	_, err = svc.NextWork(agent, prism.WorkQuery{})
	require.ErrorIs(t, err, slots.ErrNoJob, "a pipeline gone since the index was read is passed over")

	w, err := prism.New(st, st).NextWork(ctx, prism.WorkQuery{})
	require.NoError(t, err, "a caller without a key holds no seat")
	require.Equal(t, c.ID, w.Claim.ID)
}
