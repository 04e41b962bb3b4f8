package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/httpapi/client"
	"github.com/agorahq/agora/httpapi/wire"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/internal/httpjson"
	"github.com/agorahq/agora/internal/testbackend"
	"github.com/agorahq/agora/internal/testdb"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
	"github.com/agorahq/agora/store/memstore"
	"github.com/agorahq/agora/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

const admin = "admin-token"

// serve runs the whole HTTP API over st as one server process whose
// services publish on n, mounted as the all-in-one server mounts it, and
// returns its URL.
func serve(t *testing.T, st storetest.Stores, n store.Notifier) string {
	t.Helper()
	svc := slots.New(st.Slots, slots.WithNotifier(n))
	ids := identity.New(st.Identity, identity.WithAdminKey(admin), identity.WithScopes(httpapi.Scopes()))
	p := prism.New(st.Prism, st.Slots, prism.WithNotifier(n))
	mux := http.NewServeMux()
	mux.Handle("/api/v1/", httpapi.Slots(svc, ids, httpapi.WithPrism(p)))
	d := httpapi.Discussion(discussion.New(st.Discussion, discussion.WithNotifier(n)))
	for _, path := range []string{"/api/discussion", "/api/discussion/", "/api/squad-chat", "/api/squad-chat/"} {
		mux.Handle(path, d)
	}
	a := httpapi.Arena(arena.New(st.Arena, arena.WithNotifier(n)))
	for _, path := range []string{"/api/games", "/api/games/", "/api/demo/"} {
		mux.Handle(path, a)
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// setup serves the API over st and returns a client with the admin key.
func setup(t *testing.T, st storetest.Stores) *client.Client {
	t.Helper()
	return client.New(serve(t, st, st.Notifier), client.WithToken(admin))
}

// agent returns a client with a new key of name and scopes.
func agent(t *testing.T, c *client.Client, name string, scopes ...identity.Scope) *client.Client {
	t.Helper()
	k, err := c.CreateKey(t.Context(), identity.NewKey{Name: name, Scopes: scopes})
	require.NoError(t, err)
	return c.As(k.Key)
}

// expectEvent reads events until one is want, failing when the stream
// ends or none comes in time.
func expectEvent(t *testing.T, events <-chan string, want, what string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case id, ok := <-events:
			require.True(t, ok, "the stream ended before %s", what)
			if id == want {
				return
			}
		case <-deadline:
			t.Fatalf("no event for %s", what)
		}
	}
}

// receive returns the next value of ch, failing when ch is closed or
// nothing comes within ten seconds.
func receive[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v, ok := <-ch:
		require.True(t, ok, "the stream ended")
		return v
	case <-time.After(10 * time.Second):
	}
	t.Fatal("nothing came in ten seconds")
	var zero T
	return zero
}

// TestAgentLoop runs the agent loop of slots.md through the client, with
// more agents than seats racing for them: exactly three win, each is
// credited once, and the others keep polling until they are stopped. The
// claim carries its sources; the human's signing key shows on its profile.
func TestAgentLoop(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		ctx := t.Context()
		c := setup(t, st)
		h := agent(t, c, "human", slots.ScopeClaimCreate, slots.ScopeSlotsConfigure, slots.ScopeCommentCreate)
		claim, err := h.CreateClaim(ctx, client.NewClaim{Title: "Crows plan ahead", Body: "Scrub jays cache food.", Domain: "biology",
			Sources: []wire.NewSource{{URL: "https://example.org/jays", Title: "Jays"}}})
		require.NoError(t, err)
		require.Equal(t, []wire.Source{{URL: "https://example.org/jays", Title: "Jays"}}, claim.Sources)
		require.NoError(t, h.RegisterSigningKey(ctx, "0xpoi_human"))
		me, err := h.Me(ctx)
		require.NoError(t, err)
		require.NotNil(t, me.SigningKeyAddress)
		require.Equal(t, "0xpoi_human", *me.SigningKeyAddress)
		require.ErrorIs(t, h.RegisterSigningKey(ctx, ""), store.ErrInvalid)
		n, err := h.ConfigureSlots(ctx, claim.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 3})
		require.NoError(t, err)
		require.Equal(t, 3, n)
		_, err = h.Comment(ctx, claim.ID, client.NewComment{Body: "a draft", CommentType: string(slots.CommentDraft)})
		require.NoError(t, err)

		var agents []*client.Client
		for i := 0; i < 6; i++ {
			agents = append(agents, agent(t, c, fmt.Sprint("agent-", i), slots.ScopeCommentCreate))
		}
		// The losers poll until the third winner is done; the timeout only
		// keeps a broken race from hanging the test.
		polling, stop := context.WithTimeout(ctx, time.Minute)
		defer stop()
		var won atomic.Int32
		errs := make(chan error, len(agents))
		var wg sync.WaitGroup
		for _, a := range agents {
			wg.Add(1)
			go func() {
				defer wg.Done()
				job, err := a.TakeNextJob(polling, slots.JobQuery{Role: slots.RoleCritic}, 100*time.Millisecond)
				if err != nil {
					if !errors.Is(err, context.Canceled) {
						errs <- fmt.Errorf("a loser stopped with %w", err)
					}
					return
				}
				if _, err := a.Comment(ctx, job.Claim.ID, client.NewComment{Body: "which cohorts?", CommentType: string(job.Slot.Role.CommentType())}); err != nil {
					errs <- err
				}
				if err := a.Done(ctx, job.Claim.ID, job.Slot.ID); err != nil {
					errs <- err
				}
				if won.Add(1) == 3 {
					stop()
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		require.EqualValues(t, 3, won.Load(), "three seats, three winners")
		list, err := h.Slots(ctx, claim.ID)
		require.NoError(t, err)
		require.Len(t, list, 3)
		for _, s := range list {
			require.Equal(t, string(slots.StatusDone), s.Status)
		}
		total := int64(0)
		for _, a := range agents {
			me, err := a.Me(ctx)
			require.NoError(t, err)
			require.Contains(t, []int64{0, slots.RewardRoleSlot}, me.Balance)
			total += me.Balance
		}
		require.EqualValues(t, 3*slots.RewardRoleSlot, total)
	})
}

// countingTransport counts the requests it sends and closes sent at the
// first.
type countingTransport struct {
	n    atomic.Int32
	once sync.Once
	sent chan struct{}
}

func newCountingTransport() *countingTransport { return &countingTransport{sent: make(chan struct{})} }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	c.once.Do(func() { close(c.sent) })
	return http.DefaultTransport.RoundTrip(r)
}

// TestTakeNextJobWaitsOnAHeldClaim: the only open seat is on a claim the
// agent already holds one of. The job queue knows who asks and offers it
// nothing (404; a take would be 409 slot_held), so TakeNextJob backs off
// as it does when there is no work, instead of asking again at once,
// until its context ends — while another agent is offered the seat.
func TestTakeNextJobWaitsOnAHeldClaim(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		ctx := t.Context()
		url := serve(t, st, st.Notifier)
		k, err := client.New(url, client.WithToken(admin)).CreateKey(ctx, identity.NewKey{Name: "human", Scopes: []identity.Scope{slots.ScopeClaimCreate, slots.ScopeSlotsConfigure, slots.ScopeCommentCreate}})
		require.NoError(t, err)
		tr := newCountingTransport()
		h := client.New(url, client.WithToken(k.Key), client.WithHTTPClient(&http.Client{Transport: tr}))
		claim, err := h.CreateClaim(ctx, client.NewClaim{Title: "Octopuses dream", Body: "REM-like sleep."})
		require.NoError(t, err)
		_, err = h.ConfigureSlots(ctx, claim.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 2})
		require.NoError(t, err)
		_, err = h.Comment(ctx, claim.ID, client.NewComment{Body: "a draft", CommentType: string(slots.CommentDraft)})
		require.NoError(t, err)
		job, err := h.TakeNextJob(ctx, slots.JobQuery{}, time.Second)
		require.NoError(t, err)
		require.Equal(t, claim.ID, job.Claim.ID)
		err = h.Take(ctx, claim.ID, func() string {
			list, err := h.Slots(ctx, claim.ID)
			require.NoError(t, err)
			for _, s := range list {
				if s.Status == string(slots.StatusOpen) {
					return s.ID
				}
			}
			t.Fatal("no open seat left")
			return ""
		}())
		var e *client.Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, slots.ErrSlotHeld.Code, e.Code)
		require.ErrorIs(t, err, store.ErrConflict)

		_, err = h.NextJob(ctx, slots.JobQuery{})
		require.ErrorIs(t, err, store.ErrNotFound, "the queue skips a claim the asking agent holds")
		other, err := client.New(url, client.WithToken(admin)).CreateKey(ctx, identity.NewKey{Name: "other", Scopes: []identity.Scope{slots.ScopeCommentCreate}})
		require.NoError(t, err)
		offered, err := h.As(other.Key).NextJob(ctx, slots.JobQuery{})
		require.NoError(t, err)
		require.Equal(t, claim.ID, offered.Claim.ID, "but offers it to another agent")

		before := tr.n.Load()
		short, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		_, err = h.TakeNextJob(short, slots.JobQuery{}, 100*time.Millisecond)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		// A second of polls 100 ms apart, two requests each, is at most 22
		// requests; asking again at once would be hundreds.
		require.LessOrEqual(t, tr.n.Load()-before, int32(22))
	})
}

// TestKeyAvatar: a key created with an avatar URL carries it in the
// answer, the key list and its own profile, and the seat it takes shows
// it; a key created without one has none.
func TestKeyAvatar(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		ctx := t.Context()
		c := setup(t, st)
		const avatar = "https://example.com/skeptic-7.png"
		k, err := c.CreateKey(ctx, identity.NewKey{Name: "Skeptic-7", AvatarURL: avatar, Scopes: []identity.Scope{slots.ScopeCommentCreate}})
		require.NoError(t, err)
		require.Equal(t, avatar, k.AvatarURL)
		plain, err := c.CreateKey(ctx, identity.NewKey{Name: "plain"})
		require.NoError(t, err)
		require.Empty(t, plain.AvatarURL)

		keys, err := c.Keys(ctx)
		require.NoError(t, err)
		avatars := map[string]string{}
		for _, key := range keys {
			avatars[key.ID] = key.AvatarURL
		}
		require.Equal(t, map[string]string{k.ID: avatar, plain.ID: ""}, avatars)
		a := c.As(k.Key)
		me, err := a.Me(ctx)
		require.NoError(t, err)
		require.Equal(t, avatar, me.AvatarURL)
		me, err = c.As(plain.Key).Me(ctx)
		require.NoError(t, err)
		require.Empty(t, me.AvatarURL)

		claim, err := c.CreateClaim(ctx, client.NewClaim{Title: "Crows use tools", Body: "New Caledonian crows bend hooks."})
		require.NoError(t, err)
		_, err = c.ConfigureSlots(ctx, claim.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 1})
		require.NoError(t, err)
		_, err = c.Comment(ctx, claim.ID, client.NewComment{Body: "a draft", CommentType: string(slots.CommentDraft)})
		require.NoError(t, err)
		_, err = a.TakeNextJob(ctx, slots.JobQuery{}, 100*time.Millisecond)
		require.NoError(t, err)
		seats, err := c.Slots(ctx, claim.ID)
		require.NoError(t, err)
		require.Len(t, seats, 1)
		require.Equal(t, "Skeptic-7", seats[0].AgentName)
		require.Equal(t, avatar, seats[0].AgentAvatarURL)
	})
}

// TestErrorsUseTheServersTable: every row of the server's error table,
// answered by a handler, comes back from the client as an error of the
// row's kind (a 503 store.ErrUnavailable, a 429 ErrRateLimited), keeping
// the server's code.
func TestErrorsUseTheServersTable(t *testing.T) {
	for _, row := range httpjson.Statuses() {
		for _, status := range append([]int{row.Status}, row.Also...) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				httpjson.Write(w, status, httpjson.ErrorBody("some_code", "it failed"))
			}))
			_, err := client.New(srv.URL).Claim(t.Context(), "claim_1")
			srv.Close()
			require.ErrorIs(t, err, row.Kind, "%d", status)
			var e *client.Error
			require.ErrorAs(t, err, &e)
			require.Equal(t, "some_code", e.Code)
		}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			httpjson.WriteError(w, r, slog.New(slog.DiscardHandler), fmt.Errorf("deep down: %w", row.Kind))
		}))
		_, err := client.New(srv.URL).Claim(t.Context(), "claim_1")
		srv.Close()
		require.ErrorIs(t, err, row.Kind, "the kind the server mapped from comes back")
	}
	require.ErrorIs(t, &client.Error{Status: http.StatusServiceUnavailable}, store.ErrUnavailable)
	require.ErrorIs(t, &client.Error{Status: http.StatusTooManyRequests}, client.ErrRateLimited)
	require.NoError(t, (&client.Error{Status: http.StatusInternalServerError}).Unwrap())
}

// TestAnswersThatAreNotAgoras: an answer Agora did not write — a proxy's
// HTML page, an empty body — comes back as an error that says its status
// and a line of what came, not the whole page; a success whose body is not
// JSON says so, with the route, not as a bare JSON syntax error.
func TestAnswersThatAreNotAgoras(t *testing.T) {
	page := "<html>\n<head><title>502 Bad Gateway</title></head>\n<body>" + strings.Repeat("<p>nginx</p>\n", 5000) + "</body></html>"
	answers := []struct {
		status      int
		contentType string
		body        string
		want        string
	}{
		{http.StatusBadGateway, "text/html", page, "agora: 502 Bad Gateway: <html> <head><title>502 Bad Gateway</title></head>"},
		{http.StatusRequestEntityTooLarge, "", "", "agora: 413 Request Entity Too Large"},
		{http.StatusServiceUnavailable, "text/plain", "  upstream connect error  ", "agora: 503 Service Unavailable: upstream connect error"},
	}
	for _, a := range answers {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if a.contentType != "" {
				w.Header().Set("Content-Type", a.contentType)
			}
			w.WriteHeader(a.status)
			_, _ = w.Write([]byte(a.body))
		}))
		_, err := client.New(srv.URL).Claim(t.Context(), "claim_1")
		srv.Close()
		var e *client.Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, a.status, e.Status)
		require.Empty(t, e.Code, "no error object, no code")
		require.LessOrEqual(t, len(err.Error()), 300, "a line, not the page")
		require.True(t, strings.HasPrefix(err.Error(), a.want), "%q", err.Error())
		if kind := httpjson.KindOf(a.status); kind != nil {
			require.ErrorIs(t, err, kind, "the status still matches its kind")
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html>sign in to the network</html>"))
	}))
	defer srv.Close()
	_, err := client.New(srv.URL).Claim(t.Context(), "claim_1")
	require.Error(t, err)
	require.Contains(t, err.Error(), "GET /api/v1/claims/claim_1")
	require.Contains(t, err.Error(), "text/html")
	var syntax *json.SyntaxError
	require.ErrorAs(t, err, &syntax, "the decoding error is kept")
}

// TestErrorsMatchTheSentinels: every kind of error answer, from each API,
// matches its sentinel with errors.Is and keeps the server's code.
func TestErrorsMatchTheSentinels(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		ctx := t.Context()
		c := setup(t, st)
		code := func(err error) string {
			t.Helper()
			var e *client.Error
			require.ErrorAs(t, err, &e)
			require.NotEmpty(t, e.Message)
			return e.Code
		}

		// 404
		_, err := c.Claim(ctx, "claim_missing")
		require.ErrorIs(t, err, store.ErrNotFound)
		require.Equal(t, "claim_not_found", code(err))
		_, err = c.Pipeline(ctx, "claim_missing")
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = c.Flags(ctx, "claim_missing")
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = c.Prompt(ctx, "prompt_missing", 0)
		require.ErrorIs(t, err, store.ErrNotFound)
		require.Equal(t, "prompt_not_found", code(err))
		_, err = c.Game(ctx, "game_missing")
		require.ErrorIs(t, err, store.ErrNotFound)
		require.Equal(t, "game_not_found", code(err))

		// 401
		_, err = c.As("bad").Me(ctx)
		require.ErrorIs(t, err, store.ErrUnauthorized)
		_, err = c.As("").Claims(ctx, client.ClaimsQuery{})
		require.ErrorIs(t, err, store.ErrUnauthorized)

		// 403
		plain, err := c.CreateKey(ctx, identity.NewKey{Name: "plain"})
		require.NoError(t, err)
		_, err = c.As(plain.Key).CreateClaim(ctx, client.NewClaim{Title: "t"})
		require.ErrorIs(t, err, store.ErrForbidden)
		require.Equal(t, "missing_scope", code(err))
		_, err = c.As(plain.Key).CreateKey(ctx, identity.NewKey{Name: "escalate", Scopes: []identity.Scope{identity.ScopeKeysAdmin}})
		require.ErrorIs(t, err, store.ErrForbidden)

		// 400
		claim, err := c.CreateClaim(ctx, client.NewClaim{Title: "t"})
		require.NoError(t, err)
		_, err = c.ConfigureSlots(ctx, claim.ID, slots.RoleCount{Role: "judge", Count: 1})
		require.ErrorIs(t, err, store.ErrInvalid)
		_, err = c.PostMessage(ctx, client.NewMessage{AgentName: "Builder", Message: " "})
		require.ErrorIs(t, err, store.ErrInvalid)
		_, err = c.CreateGame(ctx, client.NewGame{MinPlayers: arena.MaxAgents + 1})
		require.ErrorIs(t, err, store.ErrInvalid)

		// 409
		_, err = c.ConfigureSlots(ctx, claim.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 1})
		require.NoError(t, err)
		list, err := c.Slots(ctx, claim.ID)
		require.NoError(t, err)
		require.NoError(t, c.Take(ctx, claim.ID, list[0].ID))
		err = c.As(plain.Key).Take(ctx, claim.ID, list[0].ID)
		require.ErrorIs(t, err, store.ErrForbidden, "plain has no comment:create")
		rival := agent(t, c, "rival", slots.ScopeCommentCreate)
		err = rival.Take(ctx, claim.ID, list[0].ID)
		require.ErrorIs(t, err, store.ErrConflict)
		require.Equal(t, slots.ErrSlotTaken.Code, code(err))
		p, err := c.AskSquad(ctx, client.Question{RequesterAgent: "Developer", PromptMessage: "?", RequiredResponses: 1})
		require.NoError(t, err)
		require.NoError(t, c.Respond(ctx, p.ID, discussion.Response{AgentName: "Builder", Message: "yes"}))
		err = c.Respond(ctx, p.ID, discussion.Response{AgentName: "Growth", Message: "also yes"})
		require.ErrorIs(t, err, store.ErrConflict)
		require.Equal(t, discussion.ErrPromptClosed.Code, code(err))

		// Keys: listed, revoked, and then refused.
		keys, err := c.Keys(ctx)
		require.NoError(t, err)
		require.Len(t, keys, 2)
		require.NoError(t, c.RevokeKey(ctx, plain.ID))
		_, err = c.As(plain.Key).Me(ctx)
		require.ErrorIs(t, err, store.ErrUnauthorized)
		err = c.RevokeKey(ctx, "key_missing")
		require.ErrorIs(t, err, store.ErrNotFound)
	})
}

// TestContextEndsCalls: a call whose context is already cancelled, or is
// cancelled while a long poll is parked on the server, returns at once
// with an error that errors.Is the context's; the helpers' loops stop at
// their deadline; an event stream closes its channel.
func TestContextEndsCalls(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		ctx := t.Context()
		url := serve(t, st, st.Notifier)
		c := client.New(url, client.WithToken(admin))

		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		_, err := c.Me(cancelled)
		require.ErrorIs(t, err, context.Canceled)
		_, err = c.ClaimEvents(cancelled)
		require.ErrorIs(t, err, context.Canceled)

		// returns cancels call's context once its request is on its way
		// and requires the call to end well before its long poll would.
		returns := func(what string, call func(ctx context.Context, c *client.Client) error) {
			t.Helper()
			tr := newCountingTransport()
			lc := client.New(url, client.WithToken(admin), client.WithHTTPClient(&http.Client{Transport: tr}))
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- call(ctx, lc) }()
			<-tr.sent
			cancel()
			select {
			case err := <-done:
				require.ErrorIs(t, err, context.Canceled, what)
			case <-time.After(10 * time.Second):
				t.Fatalf("%s did not return when its context was cancelled", what)
			}
		}
		game, err := c.CreateGame(ctx, client.NewGame{})
		require.NoError(t, err)
		s, err := c.WaitState(ctx, game, -1, 0)
		require.NoError(t, err)
		returns("WaitState", func(ctx context.Context, c *client.Client) error {
			_, err := c.WaitState(ctx, game, s.Version, 30*time.Second)
			return err
		})
		p, err := c.AskSquad(ctx, client.Question{RequesterAgent: "Developer", PromptMessage: "anyone?", RequiredResponses: 3})
		require.NoError(t, err)
		returns("WaitForDiscussion", func(ctx context.Context, c *client.Client) error {
			_, err := c.WaitForDiscussion(ctx, p.ID)
			return err
		})

		short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancelShort()
		_, err = c.TakeNextJob(short, slots.JobQuery{}, 50*time.Millisecond)
		require.ErrorIs(t, err, context.DeadlineExceeded, "no work: it polls until the deadline")
		short, cancelShort = context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancelShort()
		_, err = c.TakeNextWork(short, client.WorkQuery{}, 50*time.Millisecond)
		require.ErrorIs(t, err, context.DeadlineExceeded)

		events, cancelEvents := context.WithCancel(ctx)
		ch, err := c.ClaimEvents(events)
		require.NoError(t, err)
		require.Equal(t, "", receive(t, ch), "the opening event")
		cancelEvents()
		select {
		case _, ok := <-ch:
			require.False(t, ok, "no event after the context ended")
		case <-time.After(10 * time.Second):
			t.Fatal("ClaimEvents did not close its channel when its context ended")
		}
	})
}

// limited serves the /api/v1 routes on memstore with a rate limit of
// perSecond takes, dones and comments a second per key (bursts of burst)
// and returns a client with the admin key. The limit is the server's, not
// the store's, so one backend shows the client's side of it.
func limited(t *testing.T, perSecond float64, burst int) *client.Client {
	t.Helper()
	mem := memstore.New()
	svc := slots.New(mem)
	ids := identity.New(mem, identity.WithAdminKey(admin), identity.WithScopes(httpapi.Scopes()))
	mux := http.NewServeMux()
	mux.Handle("/api/v1/", httpapi.Slots(svc, ids, httpapi.WithLimiter(httpapi.NewLocalLimiter(perSecond, burst))))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return client.New(srv.URL, client.WithToken(admin))
}

// TestRateLimited: a key over its rate limit gets an error matching
// client.ErrRateLimited that says when to retry.
func TestRateLimited(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := limited(t, 0.1, 1)
	claim, err := c.CreateClaim(ctx, client.NewClaim{Title: "t"}) // spends the burst: creating counts
	require.NoError(t, err)
	_, err = c.Comment(ctx, claim.ID, client.NewComment{Body: "first", CommentType: string(slots.CommentDraft)})
	require.ErrorIs(t, err, client.ErrRateLimited)
	var e *client.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, "comment_create_limited", e.Code, "the original's code for a comment")
	require.Positive(t, e.RetryAfter)
	require.NotErrorIs(t, err, store.ErrInvalid)
}

// TestTakeNextJobWaitsOutTheRateLimit: a take refused with 429 is retried
// after Retry-After rather than returned to the agent.
func TestTakeNextJobWaitsOutTheRateLimit(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := limited(t, 1, 1)
	claim, err := c.CreateClaim(ctx, client.NewClaim{Title: "t"})
	require.NoError(t, err)
	_, err = c.ConfigureSlots(ctx, claim.ID, slots.RoleCount{Role: slots.RoleCritic, Count: 1})
	require.NoError(t, err)
	k, err := c.CreateKey(ctx, identity.NewKey{Name: "agent", Scopes: []identity.Scope{slots.ScopeCommentCreate}})
	require.NoError(t, err)
	a := c.As(k.Key)
	_, err = a.Comment(ctx, claim.ID, client.NewComment{Body: "a draft", CommentType: string(slots.CommentDraft)}) // spends the agent's burst
	require.NoError(t, err)
	job, err := a.TakeNextJob(ctx, slots.JobQuery{}, 200*time.Millisecond)
	require.NoError(t, err, "the 429 was waited out")
	require.Equal(t, claim.ID, job.Claim.ID)
}
