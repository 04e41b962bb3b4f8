package httpapi_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/internal/testbackend"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
	"github.com/agorahq/agora/store/memstore"
	"github.com/agorahq/agora/store/storetest"
)

// newLiveAPI serves /api/v1 with Prism, both services publishing on n.
func newLiveAPI(t *testing.T, st storetest.Stores, n store.Notifier) *apiClient {
	t.Helper()
	svc := slots.New(st.Slots, slots.WithNotifier(n))
	ids := identity.New(st.Identity, identity.WithAdminKey(adminToken), identity.WithScopes(httpapi.Scopes()))
	p := prism.New(st.Prism, st.Slots, prism.WithNotifier(n))
	mux := http.NewServeMux()
	mux.Handle("/api/v1/", httpapi.Slots(svc, ids, httpapi.WithLimiter(nil), httpapi.WithPrism(p)))
	srv := httptest.NewServer(validated(t, mux))
	t.Cleanup(srv.Close)
	return &apiClient{t: t, srv: srv}
}

// claimEvents opens GET /api/v1/events and returns the claim IDs of its
// "changed" events as they arrive.
func (c *apiClient) claimEvents(token string) <-chan string {
	c.t.Helper()
	req, err := http.NewRequest("GET", c.srv.URL+"/api/v1/events", nil)
	require.NoError(c.t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := c.srv.Client().Do(req)
	require.NoError(c.t, err)
	c.t.Cleanup(func() { res.Body.Close() })
	require.Equal(c.t, 200, res.StatusCode)
	require.Equal(c.t, "text/event-stream", res.Header.Get("Content-Type"))
	out := make(chan string, 100)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(res.Body)
		event := ""
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: ") && event == "changed":
				var d struct {
					ClaimID *string `json:"claimId"`
				}
				if json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d) == nil && d.ClaimID != nil {
					out <- *d.ClaimID
				}
			}
		}
	}()
	return out
}

// expectEvent waits for an event naming claimID, skipping others.
func expectEvent(t *testing.T, events <-chan string, claimID, what string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case id, ok := <-events:
			require.True(t, ok, "the stream ended before %s", what)
			if id == claimID {
				return
			}
		case <-deadline:
			t.Fatalf("no event for %s", what)
		}
	}
}

// TestClaimEventsAcrossProcesses follows GET /api/v1/events on one server
// while changes are made through another sharing the backend: a new claim
// (and its pipeline), a comment, a role-slot configuration, a take and a
// done of a role slot, and a take of a Prism stage slot each reach the
// reader with the claim's ID.
func TestClaimEventsAcrossProcesses(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		a, b := newLiveAPI(t, st, st.Notifier), newLiveAPI(t, st, st.Peer)
		_, token := a.key("operator", slots.ScopeClaimCreate, slots.ScopeCommentCreate, slots.ScopeSlotsConfigure)
		a.expect(401, "GET", "/api/v1/events", "", nil)
		events := a.claimEvents(token)
		expectEvent(t, events, "", "the opening event")

		id := b.claim(token, "health")
		expectEvent(t, events, id, "the new claim")
		b.expect(200, "POST", "/api/v1/claims/"+id+"/comments", token, map[string]any{"body": "a draft", "commentType": "draft"})
		expectEvent(t, events, id, "the comment")
		b.expect(201, "POST", "/api/v1/claims/"+id+"/slots", token, map[string]any{"roles": []map[string]any{{"role": "critic", "count": 1}}})
		expectEvent(t, events, id, "the configuration")
		slot := b.expect(200, "GET", "/api/v1/claims/"+id+"/slots", token, nil)
		var listed struct {
			Items []struct {
				ID string `json:"_id"`
			} `json:"items"`
		}
		require.NoError(t, json.Unmarshal([]byte(slot.raw), &listed))
		require.Len(t, listed.Items, 1)
		b.expect(200, "POST", "/api/v1/claims/"+id+"/slots/"+listed.Items[0].ID+"/take", token, nil)
		expectEvent(t, events, id, "the take")
		b.expect(200, "POST", "/api/v1/claims/"+id+"/slots/"+listed.Items[0].ID+"/done", token, nil)
		expectEvent(t, events, id, "the done")

		work := b.expect(200, "GET", "/api/v1/jobs/work", token, nil)
		stage := work.body["slot"].(map[string]any)
		b.expect(200, "POST", "/api/v1/claims/"+stage["claimId"].(string)+"/stage-slots/"+stage["_id"].(string)+"/take", token, nil)
		expectEvent(t, events, stage["claimId"].(string), "the stage-slot take")
	})
}

// TestClaimEventsWithoutNotifier: a server whose services have no notifier
// still tells its readers to re-read, every second (store.Subscription.Poll).
func TestClaimEventsWithoutNotifier(t *testing.T) {
	st := memstore.New()
	c := newAPI(t, storetest.Stores{Slots: st, Identity: st})
	_, token := c.key("reader")
	events := c.claimEvents(token)
	expectEvent(t, events, "", "the opening event")
	expectEvent(t, events, "", "a poll")
}
