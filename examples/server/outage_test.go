package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/internal/testdb"
)

// TestDatabaseOutage kills the database under a server at work — agents
// looping on the job queue, a live event stream open — for ten seconds, then
// starts it again: while it is down every answer is a 503 and none waits
// past the store's deadline; the server comes back by itself; every seat is
// done once and credited once; the stream delivers the changes made after
// the reconnect.
func TestDatabaseOutage(t *testing.T) {
	for _, b := range []struct {
		name string
		own  func(testing.TB) *testdb.Server
	}{{"postgres", testdb.OwnPostgres}, {"redis", testdb.OwnRedis}} {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			outage(t, b.own(t))
		})
	}
}

// answer is one HTTP exchange as a goroutine sees it.
type answer struct {
	status int
	body   map[string]any
	took   time.Duration
}

func do(method, url, token, body string) (answer, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	start := time.Now()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	a := answer{status: res.StatusCode, took: time.Since(start)}
	if err == nil && len(data) > 0 {
		err = json.Unmarshal(data, &a.body)
	}
	return a, err
}

func outage(t *testing.T, db *testdb.Server) {
	const (
		admin        = "admin-outage"
		storeTimeout = time.Second
		claims       = 12
		seatsEach    = 3
		agents       = 6
		down         = 10 * time.Second
	)
	base, _ := serve(t, "-store", db.URL, "-admin-key", admin, "-quiet", "-store-timeout", storeTimeout.String(),
		"-lease", "3s", "-rate", "100000", "-burst", "100000")

	_, key := call(t, "POST", base+"/api/v1/keys", admin, `{"name":"human","scopes":["claim:create","slots:configure","comment:create"]}`)
	human := key["key"].(string)
	var keys []string
	for i := 0; i < agents; i++ {
		_, key := call(t, "POST", base+"/api/v1/keys", admin, fmt.Sprintf(`{"name":"agent-%d","scopes":["comment:create"]}`, i))
		keys = append(keys, key["key"].(string))
	}
	var ids []string
	for i := 0; i < claims; i++ {
		status, claim := call(t, "POST", base+"/api/v1/claims", human, fmt.Sprintf(`{"title":"claim %d","body":"b"}`, i))
		require.Equal(t, 201, status)
		id := claim["_id"].(string)
		ids = append(ids, id)
		status, _ = call(t, "POST", base+"/api/v1/claims/"+id+"/slots", human, fmt.Sprintf(`{"roles":[{"role":"critic","count":%d}]}`, seatsEach))
		require.Equal(t, 201, status)
		status, _ = call(t, "POST", base+"/api/v1/claims/"+id+"/comments", human, `{"body":"d","commentType":"draft"}`)
		require.Equal(t, 200, status)
	}

	// A live stream of claim changes, open through the whole outage.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/v1/events", nil)
	req.Header.Set("Authorization", "Bearer "+admin)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	events := make(chan string, 10000)
	go func() {
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				events <- data
			}
		}
	}()

	var (
		mu      sync.Mutex
		bad     []string // answers that must not happen
		slowest time.Duration
		dones   atomic.Int64
		failed  atomic.Int64 // 503s seen
		stop    = make(chan struct{})
		wg      sync.WaitGroup
	)
	note := func(what string, a answer, err error) bool {
		mu.Lock()
		defer mu.Unlock()
		slowest = max(slowest, a.took)
		switch {
		case err != nil:
			bad = append(bad, fmt.Sprintf("%s: %v", what, err))
		case a.status == http.StatusServiceUnavailable:
			failed.Add(1)
			return false
		case a.status >= 500:
			bad = append(bad, fmt.Sprintf("%s: %d %v", what, a.status, a.body))
		}
		return err == nil
	}
	for _, k := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				a, err := do("GET", base+"/api/v1/jobs/slots", k, "")
				if !note("next job", a, err) || a.status != 200 {
					time.Sleep(20 * time.Millisecond)
					continue
				}
				claim := a.body["claim"].(map[string]any)["_id"].(string)
				slot := a.body["slot"].(map[string]any)["_id"].(string)
				path := base + "/api/v1/claims/" + claim + "/slots/" + slot
				if a, err := do("POST", path+"/take", k, ""); !note("take", a, err) || a.status != 200 {
					continue // lost the race, or unknown: the lease re-opens a seat taken unseen
				}
				for {
					a, err := do("POST", path+"/done", k, "")
					if note("done", a, err) {
						if a.status == 200 {
							dones.Add(1)
						}
						break
					}
					time.Sleep(50 * time.Millisecond) // a 503: try again
				}
			}
		}()
	}

	// Half the seats, then the outage.
	require.Eventually(t, func() bool { return dones.Load() >= claims*seatsEach/2 }, time.Minute, 10*time.Millisecond)
	db.Kill(t)
	killed := time.Now()
	time.Sleep(down)
	require.Positive(t, failed.Load(), "the outage was seen as 503s")
	db.Start(t)
	restarted := time.Now()
	require.Eventually(t, func() bool {
		a, err := do("GET", base+"/api/v1/me", admin, "")
		return err == nil && a.status == 200
	}, time.Minute, 10*time.Millisecond, "service is back without a restart")
	t.Logf("down %v, back %v after the database's start, %d 503s", restarted.Sub(killed).Round(time.Millisecond), time.Since(restarted).Round(time.Millisecond), failed.Load())

	// Every seat done, once.
	require.Eventually(t, func() bool {
		open := 0
		for _, id := range ids {
			a, err := do("GET", base+"/api/v1/claims/"+id+"/slots", admin, "")
			if err != nil || a.status != 200 {
				return false
			}
			for _, s := range a.body["items"].([]any) {
				if s.(map[string]any)["status"] != "done" {
					open++
				}
			}
		}
		return open == 0
	}, 2*time.Minute, 100*time.Millisecond, "every seat is done")
	close(stop)
	wg.Wait()
	var credited float64
	for _, k := range keys {
		a, err := do("GET", base+"/api/v1/me", k, "")
		require.NoError(t, err)
		require.Equal(t, 200, a.status)
		credited += a.body["balance"].(float64)
	}
	require.Equal(t, float64(10*claims*seatsEach), credited, "every seat credited once")
	require.LessOrEqual(t, dones.Load(), int64(claims*seatsEach), "no seat done twice")
	mu.Lock()
	require.Empty(t, bad, "only 503s while the database was down")
	require.Less(t, slowest, storeTimeout+5*time.Second, "no request waited far past the store's deadline")
	mu.Unlock()

	// The stream survived: a change made now is announced by its claim ID,
	// or — when the change came before the notifier's reconnect — by the
	// re-read-everything event (an empty ID) the reconnect sends after it;
	// a change made after that is announced by its ID.
	announced := func(wantEmpty bool) bool {
		status, claim := call(t, "POST", base+"/api/v1/claims", human, `{"title":"after","body":"b"}`)
		require.Equal(t, 201, status)
		want := fmt.Sprintf(`{"claimId":%q}`, claim["_id"])
		deadline := time.After(30 * time.Second)
		for {
			select {
			case got := <-events:
				if got == want {
					return true
				}
				if wantEmpty && got == `{"claimId":""}` {
					return false
				}
			case <-deadline:
				t.Fatalf("the stream opened before the outage never announced %s", want)
			}
		}
	}
	for len(events) > 0 {
		<-events // what came before
	}
	if !announced(true) {
		require.True(t, announced(false))
	}
}
