package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/httpapi/mcp"
	"github.com/agorahq/agora/internal/testbackend"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/storetest"
)

// TestResources reads a claim, a game and a prompt as resources and hears
// of their changes through subscriptions fed by the notifier, on every
// backend, subscribing by resources/subscribe (up to the 2025-11-25
// protocol) and by subscriptions/listen (2026-07-28).
func TestResources(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) { testResources(t, version) })
	}
}

func testResources(t *testing.T, version string) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		ctx := context.Background()
		b := setup(t, st)
		claim := b.claimsWithSeats(t, "Crows plan ahead")[0]
		g, err := b.svcs.Arena.Create(ctx, arena.TableMin, 0)
		require.NoError(t, err)
		asker := b.connect(t, b.key(t, "lead", discussion.ScopeWrite))
		prompt := ok[mcp.AskOutput](t, asker, "ask_squad", map[string]any{"message": "Ship?", "required_responses": 1}).PromptID

		updated, acked := make(chan string, 1024), make(chan string, 16)
		watcher := connectWith(t, mcp.NewServer(b.svcs, mcp.Options{Token: b.key(t, "watcher")}), &sdk.ClientOptions{
			ResourceUpdatedHandler: func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) { updated <- req.Params.URI },
		}, &sdk.ClientSessionOptions{ProtocolVersion: version}, ackedInto(acked))
		require.Equal(t, version, watcher.InitializeResult().ProtocolVersion)
		// subscribe returns once the server has subscribed: under
		// subscriptions/listen the SDK's Subscribe returns before that, and
		// a change made before the server acknowledges the subscription is
		// not the subscriber's to hear.
		subscribe := func(uri string) {
			t.Helper()
			require.NoError(t, watcher.Subscribe(ctx, &sdk.SubscribeParams{URI: uri}))
			if version < "2026-07-28" {
				return // resources/subscribe is answered once the server has subscribed
			}
			select {
			case got := <-acked:
				require.Equal(t, uri, got)
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: no acknowledgement", uri)
			}
		}
		read := func(uri string, v any) {
			t.Helper()
			res, err := watcher.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
			require.NoError(t, err)
			require.Len(t, res.Contents, 1)
			require.NoError(t, json.Unmarshal([]byte(res.Contents[0].Text), v))
		}
		hears := func(uri string) {
			t.Helper()
			deadline := time.After(10 * time.Second)
			for {
				select {
				case got := <-updated:
					if got == uri {
						return
					}
				case <-deadline:
					t.Fatalf("no update of %s", uri)
				}
			}
		}

		templates, err := watcher.ListResourceTemplates(ctx, nil)
		require.NoError(t, err)
		require.Len(t, templates.ResourceTemplates, 3)

		claimURI := "agora://claims/" + claim
		var c mcp.ClaimResource
		read(claimURI, &c)
		require.Equal(t, claim, c.Claim.ID)
		require.Len(t, c.Slots, 1)
		require.Equal(t, "open", c.Slots[0].Status)
		subscribe(claimURI)
		worker := b.connect(t, b.key(t, "worker", slots.ScopeCommentCreate))
		ok[mcp.JobOutput](t, worker, "take_job", nil)
		hears(claimURI)
		read(claimURI, &c)
		require.Equal(t, "taken", c.Slots[0].Status)

		gameURI := "agora://games/" + g.ID
		subscribe(gameURI)
		player := b.connect(t, b.key(t, "player", arena.ScopePlay))
		ok[mcp.JoinOutput](t, player, "join_game", map[string]any{"game_id": g.ID, "display_name": "P"})
		hears(gameURI)
		var state struct {
			GameID string `json:"game_id"`
		}
		read(gameURI, &state)
		require.Equal(t, g.ID, state.GameID)

		promptURI := "agora://prompts/" + prompt
		subscribe(promptURI)
		answerer := b.connect(t, b.key(t, "scout", discussion.ScopeWrite))
		ok[mcp.AnswerOutput](t, answerer, "answer_prompt", map[string]any{"prompt_id": prompt, "message": "Yes."})
		hears(promptURI)
		var p struct {
			Status string `json:"status"`
		}
		read(promptURI, &p)
		require.Equal(t, "resolved", p.Status)

		// Unsubscribed, the claim's changes are no longer told (once the
		// updates already on their way have arrived).
		require.NoError(t, watcher.Unsubscribe(ctx, &sdk.UnsubscribeParams{URI: claimURI}))
		for settled := false; !settled; {
			select {
			case <-updated:
			case <-time.After(200 * time.Millisecond):
				settled = true
			}
		}
		ok[mcp.CommentOutput](t, worker, "post_comment", map[string]any{"claim_id": claim, "body": "x", "comment_type": "criticism"})
		select {
		case got := <-updated:
			require.NotEqual(t, claimURI, got, "an update after unsubscribing")
		case <-time.After(300 * time.Millisecond):
		}

		_, err = watcher.ReadResource(ctx, &sdk.ReadResourceParams{URI: "agora://claims/nope"})
		require.Error(t, err, "an unknown claim is not found")
	})
}

// ackedInto is a client's receiving middleware that sends each resource
// URI the server acknowledges a subscription to (the protocol's
// notifications/subscriptions/acknowledged) into acked.
func ackedInto(acked chan<- string) sdk.Middleware {
	return func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			res, err := next(ctx, method, req)
			if p, ok := req.GetParams().(*sdk.SubscriptionsAcknowledgedParams); ok && method == "notifications/subscriptions/acknowledged" {
				for _, uri := range p.Notifications.ResourceSubscriptions {
					acked <- uri
				}
			}
			return res, err
		}
	}
}

// TestResourcesNotFoundKeepTheSession reads resources that are not there,
// their URIs holding a control character or a NUL, on every backend: each
// is the protocol's not-found error, and the session goes on (an error
// whose data is no JSON would end it).
func TestResourcesNotFoundKeepTheSession(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		ctx := context.Background()
		b := setup(t, st)
		cs := b.connect(t, b.key(t, "reader"))
		for _, uri := range []string{"agora://claims/a\x01b", "agora://games/\x7f", "agora://prompts/a\x00b", "agora://claims/a\x00b", "agora://elsewhere/\x1b"} {
			_, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
			require.ErrorContains(t, err, "Resource not found", "%q", uri)
			ok[mcp.ProfileOutput](t, cs, "my_profile", nil)
		}
	})
}

// TestSubscriptionsPerSessionAreBounded holds a session to
// mcp.MaxSubscriptions resources at once (the edge's bound, the same on
// every backend, so on memory): one more is refused with
// too_many_subscriptions, a resource already followed may be subscribed
// again, and an unsubscription makes room. It subscribes by
// resources/subscribe, whose answer carries the refusal; a
// subscriptions/listen stream asking for more is refused whole.
func TestSubscriptionsPerSessionAreBounded(t *testing.T) {
	ctx := context.Background()
	b := setup(t, testbackend.All()[0].New(t))
	classic := &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"}
	srv := mcp.NewServer(b.svcs, mcp.Options{Token: b.key(t, "watcher")})
	cs := connectWith(t, srv, nil, classic)
	uri := func(i int) string { return fmt.Sprintf("agora://claims/c%d", i) }
	for i := range mcp.MaxSubscriptions {
		require.NoError(t, cs.Subscribe(ctx, &sdk.SubscribeParams{URI: uri(i)}))
	}
	err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: uri(mcp.MaxSubscriptions)})
	require.ErrorContains(t, err, "too_many_subscriptions")
	require.NoError(t, cs.Subscribe(ctx, &sdk.SubscribeParams{URI: uri(0)}), "one already followed")
	require.NoError(t, cs.Unsubscribe(ctx, &sdk.UnsubscribeParams{URI: uri(0)}))
	require.NoError(t, cs.Subscribe(ctx, &sdk.SubscribeParams{URI: uri(mcp.MaxSubscriptions)}))
	other := connectWith(t, srv, nil, classic)
	require.NoError(t, other.Subscribe(ctx, &sdk.SubscribeParams{URI: uri(mcp.MaxSubscriptions + 1)}), "the bound is each session's")
	ok[mcp.ProfileOutput](t, cs, "my_profile", nil)
}

// TestSubscribingAgainAndAgainHoldsNoMoreGoroutines: a session that
// subscribes to a resource and unsubscribes, over and over, holds no more
// than it holds for what it follows now — each subscription's watch for
// the session's end goes with it, not with the session.
func TestSubscribingAgainAndAgainHoldsNoMoreGoroutines(t *testing.T) {
	ctx := context.Background()
	b := setup(t, testbackend.All()[0].New(t))
	classic := &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"}
	srv := mcp.NewServer(b.svcs, mcp.Options{Token: b.key(t, "watcher")})
	cs := connectWith(t, srv, nil, classic)
	const uri = "agora://claims/c1"
	cycle := func() {
		require.NoError(t, cs.Subscribe(ctx, &sdk.SubscribeParams{URI: uri}))
		require.NoError(t, cs.Unsubscribe(ctx, &sdk.UnsubscribeParams{URI: uri}))
	}
	cycle()
	before := runtime.NumGoroutine()
	for range 500 {
		cycle()
	}
	require.Eventually(t, func() bool { return runtime.NumGoroutine()-before < 50 }, 5*time.Second, 10*time.Millisecond,
		"goroutines after 500 subscriptions ended: %d more than before", runtime.NumGoroutine()-before)
	ok[mcp.ProfileOutput](t, cs, "my_profile", nil)
}
