package mcp

import (
	"context"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// TestRecordedSubscriptionTellsAMissedChange: a change heard while a
// subscriber was arming is told once the server has recorded the
// subscription, and the subscriber is armed: after the resources/subscribe
// request (up to the 2025-11-25 protocol) or once the server acknowledges a
// subscriptions/listen stream, which sends no such request (2026-07-28).
func TestRecordedSubscriptionTellsAMissedChange(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			ctx := context.Background()
			s := sdk.NewServer(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ServerOptions{
				SubscribeHandler:   func(context.Context, *sdk.SubscribeRequest) error { return nil },
				UnsubscribeHandler: func(context.Context, *sdk.UnsubscribeRequest) error { return nil },
			})
			s.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: claimURI + "{id}", Name: "claim"},
				func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
					return nil, sdk.ResourceNotFoundError("")
				})
			uri := claimURI + "c1"
			w := &watches{byURI: map[string]*watch{uri: {sessions: map[*sdk.ServerSession]bool{}, stop: func() {}, arming: 1, missed: true}}, held: map[*sdk.ServerSession]map[string]bool{}}
			w.attach(s)

			updated := make(chan string, 8)
			ct, st := sdk.NewInMemoryTransports()
			ss, err := s.Connect(ctx, st, nil)
			require.NoError(t, err)
			cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ClientOptions{
				ResourceUpdatedHandler: func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) { updated <- req.Params.URI },
			}).Connect(ctx, ct, &sdk.ClientSessionOptions{ProtocolVersion: version})
			require.NoError(t, err)
			t.Cleanup(func() { _ = cs.Close(); _ = ss.Wait() })
			require.Equal(t, version, cs.InitializeResult().ProtocolVersion)

			require.NoError(t, cs.Subscribe(ctx, &sdk.SubscribeParams{URI: uri}))
			select {
			case got := <-updated:
				require.Equal(t, uri, got)
			case <-time.After(10 * time.Second):
				t.Fatal("the change missed while arming was never told")
			}
			w.mu.Lock()
			defer w.mu.Unlock()
			require.Zero(t, w.byURI[uri].arming, "armed once recorded")
			require.False(t, w.byURI[uri].missed)
		})
	}
}
