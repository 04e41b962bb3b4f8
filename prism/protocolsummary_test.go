package prism_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/memstore"
)

// TestProtocolSummariesCountEveryRegisteredProtocol: a registered
// protocol used less than the MaxProtocolNames most used names (and the
// other registered ones) still lists its claims, though the listing of
// uses stopped before it; the names past the most used are left out.
func TestProtocolSummariesCountEveryRegisteredProtocol(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	svc := prism.New(st, st)
	quick := prism.Protocol{ID: "quick", Name: "Quick", Layers: []prism.Layer{{Number: 1, Name: "Vote", ConsensusSlots: 1, Threshold: 0.5, Effect: prism.EffectNone}}}
	require.NoError(t, svc.RegisterProtocol(ctx, quick))
	_, _, err := svc.CreateClaim(ctx, prism.NewClaim{NewClaim: slots.NewClaim{Title: "quick"}, Protocol: quick.ID})
	require.NoError(t, err)
	names := len(prism.BuiltinIDs) + 1 + prism.MaxProtocolNames
	for i := range names {
		for range 2 {
			_, _, err := svc.CreateClaim(ctx, prism.NewClaim{NewClaim: slots.NewClaim{Title: "t"}, Protocol: fmt.Sprint("name-", i)})
			require.NoError(t, err)
		}
	}
	sums, err := svc.ProtocolSummaries(ctx)
	require.NoError(t, err)
	require.Len(t, sums, len(prism.BuiltinIDs)+1+prism.MaxProtocolNames, "the registered ones and the most used names")
	var got prism.ProtocolSummary
	for _, s := range sums {
		if s.Protocol.ID == quick.ID {
			got = s
		}
	}
	require.Equal(t, 1, got.Claims, "quick's one claim, past the most used names")
	one, err := svc.ProtocolSummary(ctx, quick.ID)
	require.NoError(t, err)
	require.Equal(t, got, one)
}
