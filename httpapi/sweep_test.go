package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/agentchat"
	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/internal/testbackend"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store/storetest"
)

// idleRunner is an agent that answers nothing at once.
type idleRunner struct{}

func (idleRunner) Run(context.Context, agentchat.RunRequest) (agentchat.RunResult, error) {
	return agentchat.RunResult{}, nil
}

// hostile are the values the sweep puts where a route takes an ID, escaped
// for a URL path.
var hostile = []string{"x", "a%00b", "%ff%fe", "%c0%80", strings.Repeat("z", 3000), "999999999999999999999", "-1", "%20"}

// hostileQueries go after every route's path.
var hostileQueries = []string{"", "?limit=999999999999&layer=999999999999&after=99999999999999999999&version=999999999999999999999&wait=0",
	"?cursor=%00&domain=%ff&role=a%00&status=%fe&type=%00", "?limit=-5&wait=0&strategy=%00"}

// hostileBodies are sent to every route that takes a body.
var hostileBodies = []string{`{"title":"\u0000","body":"b","name":"a\u0000"}`, "{\"title\":\"\xff\xfe\"}", `{"content":"x\u0000y"}`,
	`{"x":1e999}`, `{"min_players":99999999999999999999}`, `[]`, `{}`}

// TestSweepEveryRoute sends NUL characters, invalid UTF-8, overflowing
// numbers and odd IDs to every route of every handler, on every backend:
// no answer is a 5xx, and every backend answers every request alike.
func TestSweepEveryRoute(t *testing.T) {
	var (
		mu      sync.Mutex
		answers = map[string]map[string]int{} // backend -> request -> status
		order   []string                      // the requests, as one backend sent them
	)
	// The group returns once every backend's parallel subtest has.
	t.Run("backends", func(t *testing.T) {
		testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
			handlers := everyHandler(t, st)
			got := map[string]int{}
			var sent []string
			for _, name := range []string{"aop", "arena", "discussion", "agentchat", "discussion-keyed", "arena-keyed"} {
				h := handlers[name]
				lister, ok := h.(interface{ Routes() []string })
				require.True(t, ok, "%s lists its routes", name)
				routes := lister.Routes()
				require.NotEmpty(t, routes, name)
				for _, route := range routes {
					method, pattern, _ := strings.Cut(route, " ")
					streams := strings.HasSuffix(pattern, "/events") || strings.HasSuffix(pattern, "/stream")
					if streams {
						method = "HEAD" // a GET would stream until the test ends
					}
					for _, id := range hostile {
						path := fillPattern(pattern, id)
						for _, q := range hostileQueries {
							bodies := []string{""}
							if method != "GET" && method != "HEAD" {
								bodies = hostileBodies
							}
							for _, body := range bodies {
								req := httptest.NewRequest(method, "http://agora.test"+path+q, strings.NewReader(body))
								req.Header.Set("Authorization", "Bearer "+admin)
								req.Header.Set("Content-Type", "application/json")
								rec := httptest.NewRecorder()
								h.ServeHTTP(rec, req)
								key := fmt.Sprintf("%s %s%s %q", method, path, q, body)
								if len(key) > 300 {
									key = key[:150] + "…" + key[len(key)-150:]
								}
								require.Less(t, rec.Code, 500, "%s answered %d: %s", key, rec.Code, rec.Body)
								got[key] = rec.Code
								sent = append(sent, key)
							}
						}
					}
				}
			}
			mu.Lock()
			answers[t.Name()], order = got, sent
			mu.Unlock()
		})
	})
	require.Len(t, answers, len(testbackend.All()), "every backend answered")
	require.NotEmpty(t, order)
	var first string
	for name := range answers {
		if first == "" {
			first = name
			continue
		}
		for _, key := range order {
			require.Equal(t, answers[first][key], answers[name][key], "%s: %s and %s answer differently", key, first, name)
		}
	}
}

const admin = "admin-sweep"

// everyHandler builds the four route families on st, admin being the admin
// key, and the discussion and arena routes with keys required.
func everyHandler(t *testing.T, st storetest.Stores) map[string]http.Handler {
	svc := slots.New(st.Slots, slots.WithNotifier(st.Notifier))
	ids := identity.New(st.Identity, identity.WithAdminKey(admin), identity.WithScopes(httpapi.Scopes()))
	pipelines := prism.New(st.Prism, st.Slots, prism.WithNotifier(st.Notifier))
	chat := agentchat.New(st.AgentChat, idleRunner{}, agentchat.WithNotifier(st.Notifier))
	t.Cleanup(chat.Close)
	return map[string]http.Handler{
		"aop":        httpapi.Slots(svc, ids, httpapi.WithPrism(pipelines), httpapi.WithLimiter(nil)),
		"arena":      httpapi.Arena(arena.New(st.Arena, arena.WithNotifier(st.Notifier))),
		"discussion": httpapi.Discussion(discussion.New(st.Discussion, discussion.WithNotifier(st.Notifier))),
		"agentchat":  httpapi.AgentChat(chat),
		// The keyed mode's own checks (names, scopes, requester, the
		// agent's key) meet the same hostile input.
		"discussion-keyed": httpapi.Discussion(discussion.New(st.Discussion, discussion.WithNotifier(st.Notifier)), httpapi.WithKeys(ids), httpapi.WithLimiter(nil)),
		"arena-keyed":      httpapi.Arena(arena.New(st.Arena, arena.WithNotifier(st.Notifier)), httpapi.WithKeys(ids), httpapi.WithLimiter(nil)),
	}
}

// TestCrossSiteWritesAreRefused: a browser POST from another site (the
// headers Chromium sends with it) is a 403 on every route that changes
// something, on every backend, before the route runs; the same request
// from a page of the same origin, or from a client that is not a browser,
// reaches the route.
func TestCrossSiteWritesAreRefused(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		for name, h := range everyHandler(t, st) {
			for _, route := range h.(interface{ Routes() []string }).Routes() {
				method, pattern, _ := strings.Cut(route, " ")
				if method == "GET" {
					continue
				}
				path := fillPattern(pattern, "x")
				send := func(headers map[string]string) *httptest.ResponseRecorder {
					req := httptest.NewRequest(method, "http://agora.test"+path, strings.NewReader(`{}`))
					req.Header.Set("Content-Type", "text/plain;charset=UTF-8")
					req.Header.Set("Authorization", "Bearer "+admin)
					for k, v := range headers {
						req.Header.Set(k, v)
					}
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, req)
					return rec
				}
				rec := send(map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", "Origin": "https://evil.example"})
				require.Equal(t, http.StatusForbidden, rec.Code, "%s %s", name, route)
				require.Contains(t, rec.Body.String(), `"cross_origin"`, "%s %s", name, route)
				rec = send(map[string]string{"Origin": "https://evil.example"}) // an older browser: Origin alone
				require.Equal(t, http.StatusForbidden, rec.Code, "%s %s", name, route)
				for _, headers := range []map[string]string{{"Sec-Fetch-Site": "same-origin", "Origin": "http://agora.test"}, {}} {
					rec = send(headers)
					require.NotContains(t, rec.Body.String(), `"cross_origin"`, "%s %s %v", name, route, headers)
				}
			}
		}
	})
}

// fillPattern puts id (already escaped) in place of every {wildcard}.
func fillPattern(pattern, id string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(pattern, '{')
		if i < 0 {
			b.WriteString(pattern)
			return b.String()
		}
		j := strings.IndexByte(pattern[i:], '}')
		b.WriteString(pattern[:i])
		b.WriteString(id)
		pattern = pattern[i+j+1:]
	}
}

// TestBrokenBodiesEveryRoute: a body that cannot be read (the error a
// malformed chunked body gives) is never a 5xx on any route that takes a
// body, on any backend, and every backend answers it alike.
func TestBrokenBodiesEveryRoute(t *testing.T) {
	var mu sync.Mutex
	answers := map[string]map[string]int{}
	t.Run("backends", func(t *testing.T) {
		testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
			got := map[string]int{}
			for name, h := range everyHandler(t, st) {
				for _, route := range h.(interface{ Routes() []string }).Routes() {
					method, pattern, _ := strings.Cut(route, " ")
					if method == "GET" || method == "HEAD" {
						continue
					}
					req := httptest.NewRequest(method, "http://agora.test"+fillPattern(pattern, "x"), iotest.ErrReader(errors.New("http: malformed chunked encoding")))
					req.Header.Set("Authorization", "Bearer "+admin)
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, req)
					require.Less(t, rec.Code, 500, "%s %s answered %d: %s", name, route, rec.Code, rec.Body)
					require.Contains(t, rec.Header().Get("Content-Type"), "application/json", "%s %s", name, route)
					got[name+" "+route] = rec.Code
				}
			}
			mu.Lock()
			answers[t.Name()] = got
			mu.Unlock()
		})
	})
	var first map[string]int
	for _, got := range answers {
		if first == nil {
			first = got
		}
		require.Equal(t, first, got, "every backend answers alike")
	}
}

// TestOversizeBodiesEveryRoute: a request declaring a body larger than
// MaxBodyBytes is 413 payload_too_large, in JSON, on every route of every
// handler that takes anything but GET, on every backend — those that read
// no body included — before the route runs: its body is never read (the
// client is not kept waiting for a body it may still be sending) and
// nothing is written.
func TestOversizeBodiesEveryRoute(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		handlers := everyHandler(t, st)
		for name, h := range handlers {
			for _, route := range h.(interface{ Routes() []string }).Routes() {
				method, pattern, _ := strings.Cut(route, " ")
				if method == "GET" || method == "HEAD" {
					continue
				}
				body := &unreadBody{}
				req := httptest.NewRequest(method, "http://agora.test"+fillPattern(pattern, "x"), body)
				req.ContentLength = httpapi.MaxBodyBytes + 1
				req.Header.Set("Authorization", "Bearer "+admin)
				req.Header.Set("Content-Type", "application/json")
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code, "%s %s: %s", name, route, rec.Body)
				require.Contains(t, rec.Header().Get("Content-Type"), "application/json", "%s %s", name, route)
				require.Contains(t, rec.Body.String(), `"payload_too_large"`, "%s %s", name, route)
				require.False(t, body.read, "%s %s read the body", name, route)
			}
		}
		// The routes that create something without a body created nothing.
		for _, path := range []string{"/api/games"} {
			req := httptest.NewRequest("GET", "http://agora.test"+path, nil)
			rec := httptest.NewRecorder()
			handlers["arena"].ServeHTTP(rec, req)
			require.Equal(t, http.StatusOK, rec.Code)
			require.JSONEq(t, `[]`, rec.Body.String(), "no game was made")
		}
	})
}

// unreadBody is a body that says whether it was read.
type unreadBody struct{ read bool }

func (b *unreadBody) Read(p []byte) (int, error) {
	b.read = true
	return copy(p, "{}"), io.EOF
}
