package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/internal/testbackend"
	"github.com/agorahq/agora/store/storetest"
)

func newArenaAPI(t *testing.T, st storetest.Stores, peer bool) *apiClient {
	t.Helper()
	n := st.Notifier
	if peer {
		n = st.Peer
	}
	return serveArena(t, arena.New(st.Arena, arena.WithNotifier(n)))
}

// serveArena serves the arena routes of svc as the example server mounts
// them.
func serveArena(t *testing.T, svc *arena.Service) *apiClient {
	srv := httptest.NewServer(validated(t, arenaMux(svc)))
	t.Cleanup(srv.Close)
	return &apiClient{t: t, srv: srv}
}

// arenaMux mounts the arena routes of svc as the example server does.
func arenaMux(svc *arena.Service) http.Handler {
	h := httpapi.Arena(svc)
	mux := http.NewServeMux()
	for _, p := range []string{"/api/games", "/api/games/", "/api/demo/", "/skill.md", "/health"} {
		mux.Handle(p, h)
	}
	return mux
}

// TestArenaFiveAgentGame plays a game to its end with HTTP calls only,
// following the action sequence of arena.md.
func TestArenaFiveAgentGame(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newArenaAPI(t, st, false)
		// 200, not 201: the original's FastAPI routes answer every POST 200.
		game := c.expect(200, "POST", "/api/games", "", map[string]any{"min_players": 5}).body["game_id"].(string)
		base := "/api/games/" + game
		var agents []string
		for i := 0; i < 5; i++ {
			r := c.expect(200, "POST", base+"/agents/register", "", map[string]any{"display_name": fmt.Sprint("Agent ", i), "token": nil}).body
			require.Equal(t, game, r["game_id"])
			agents = append(agents, r["agent_id"].(string))
			if i == 3 {
				require.Equal(t, "waiting_for_agents", c.expect(200, "GET", base, "", nil).body["status"])
			}
		}
		require.Equal(t, "ready_to_start", c.expect(200, "GET", base+"/state", "", nil).body["status"])
		c.expect(200, "POST", base+"/start", "", nil)
		c.expect(400, "POST", base+"/start", "", nil)

		for steps := 0; ; steps++ {
			require.Less(t, steps, 200)
			state := c.expect(200, "GET", base+"/state", "", nil).body
			if state["status"] == "game_completed" {
				break
			}
			acted := false
			for _, id := range agents {
				oa := c.expect(200, "GET", base+"/open-actions?agent_id="+id, "", nil).body
				if oa["can_act"] != true {
					continue
				}
				round := oa["round_id"].(string)
				switch oa["allowed_action"] {
				case "argument":
					c.expect(200, "POST", base+"/rounds/"+round+"/arguments", "", map[string]any{"agent_id": id, "text": "The greater good."})
				case "decision":
					d := c.expect(200, "POST", base+"/rounds/"+round+"/decision", "", map[string]any{"agent_id": id, "decision": "save_majority"}).body
					require.Equal(t, "ok", d["status"], "a decision answers the original's {status: ok, decision}")
					require.Equal(t, "save_majority", d["decision"])
				}
				acted = true
			}
			require.True(t, acted, "nobody could act in %v", state)
		}
		state := c.expect(200, "GET", base+"/state", "", nil).body
		for _, f := range []string{"game_id", "status", "current_round_number", "current_round_id", "current_phase", "operator", "majority_agents", "minority_agents", "decision", "round_outcome", "scores", "coverage", "phase_activity", "last_event_at", "board", "version"} {
			require.Contains(t, state, f)
		}
		for _, cov := range state["coverage"].([]any) {
			require.Equal(t, true, cov.(map[string]any)["complete"])
		}
		b := state["board"].(map[string]any)
		require.Equal(t, "save_majority", b["selected_branch"], "the branch is the decision, as the original's page reads it")
		require.Equal(t, "resolved", b["resolution_state"])
		require.NotEmpty(t, b["survivors"])
		hist := c.expect(200, "GET", base+"/history", "", nil).body["rounds"].([]any)
		require.GreaterOrEqual(t, len(hist), 5)
		feed := c.expect(200, "GET", base+"/feed?limit=5", "", nil).body["items"].([]any)
		require.Len(t, feed, 5)
		require.Equal(t, "event", feed[0].(map[string]any)["type"], "newest first")
		require.Equal(t, "game_completed", feed[0].(map[string]any)["payload"].(map[string]any)["type"])
		require.Equal(t, "game_completed", feed[0].(map[string]any)["payload"].(map[string]any)["event_type"])
		sb := c.expect(200, "GET", base+"/scoreboard", "", nil).body
		scores := sb["scores"].([]any)
		require.Len(t, scores, 5)
		for i, row := range scores {
			require.Equal(t, map[string]any{"agent_id": agents[i], "display_name": fmt.Sprint("Agent ", i), "score": state["scores"].(map[string]any)[agents[i]]}, row)
		}
		list := c.expect(200, "GET", "/api/games?status=game_completed", "", nil)
		require.Contains(t, list.raw, game)
	})
}

func TestArenaErrors(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newArenaAPI(t, st, false)
		c.expect(404, "GET", "/api/games/game_missing/state", "", nil)
		c.expect(404, "POST", "/api/games/game_missing/agents/register", "", map[string]any{"display_name": "A"})
		for _, n := range []int{0, -1, 51} {
			r := c.expect(400, "POST", "/api/games", "", map[string]any{"min_players": n})
			require.Equal(t, "min_players must be from 1 to 50", r.body["detail"])
		}
		for field, v := range map[string]any{"min_players": "3", "phase_timeout_s": 2.5} {
			r := c.expect(400, "POST", "/api/games", "", map[string]any{field: v})
			require.Equal(t, "invalid_"+field, r.errCode(t))
			require.Equal(t, field+" must be an integer", r.body["detail"])
		}
		for _, body := range []string{`{"min_players":2.0,"phase_timeout_s":60.0}`, `{"min_players":null,"phase_timeout_s":null}`} {
			r := c.do("POST", "/api/games", "", body)
			require.Equal(t, 200, r.status, "%s: %s", body, r.raw)
		}
		r := c.expect(400, "GET", "/api/games?status=bogus", "", nil)
		require.Equal(t, "invalid_status", r.errCode(t))
		c.expect(200, "GET", "/api/games?status=game_completed", "", nil)
		demo := c.expect(200, "POST", "/api/demo/create", "", nil).body
		require.Len(t, demo["agents"].([]any), 3)
		game := demo["game_id"].(string)
		base := "/api/games/" + game
		tok := c.expect(200, "POST", base+"/agents/register", "", map[string]any{"display_name": "Dora", "token": "dora-secret"}).body["agent_id"].(string)
		c.expect(400, "POST", base+"/agents/register", "", map[string]any{"display_name": ""})
		c.expect(200, "POST", base+"/start", "", nil)
		r = c.expect(400, "POST", base+"/agents/register", "", map[string]any{"display_name": "Late"})
		require.Contains(t, r.body["error"].(map[string]any)["message"], "Game already started")

		state := c.expect(200, "GET", base+"/state", "", nil).body
		round := state["current_round_id"].(string)
		op := state["operator"].(map[string]any)["id"].(string)
		c.expect(404, "POST", base+"/rounds/round_missing/arguments", "", map[string]any{"agent_id": op, "text": "x"})
		r = c.expect(400, "POST", base+"/rounds/"+round+"/arguments", "", map[string]any{"agent_id": op, "text": "x"})
		require.Contains(t, r.body["error"].(map[string]any)["message"], "Agent not in this round as majority/minority")
		r = c.expect(400, "POST", base+"/rounds/"+round+"/decision", "", map[string]any{"agent_id": op, "decision": "save_majority"})
		require.Contains(t, r.body["error"].(map[string]any)["message"], "Not in decision phase")
		c.expect(400, "POST", base+"/rounds/"+round+"/arguments", "", map[string]any{"agent_id": op, "text": strings.Repeat("x", 501)})
		// Dora registered with a token: her actions need it.
		track := append(state["majority_agents"].([]any), state["minority_agents"].([]any)...)
		for _, s := range track {
			if s.(map[string]any)["id"] == tok {
				c.expect(403, "POST", base+"/rounds/"+round+"/arguments", "", map[string]any{"agent_id": tok, "text": "x"})
				c.expect(403, "POST", base+"/rounds/"+round+"/arguments", "wrong", map[string]any{"agent_id": tok, "text": "x"})
				c.expect(200, "POST", base+"/rounds/"+round+"/arguments", "dora-secret", map[string]any{"agent_id": tok, "text": "x"})
			}
		}
		c.expect(400, "POST", base+"/advance", "", map[string]any{"action": "explode"})
		before := c.expect(200, "GET", base+"/state", "", nil).body
		r = c.expect(400, "POST", base+"/advance", "", map[string]any{"action": "resolve_round"})
		require.Equal(t, "Not awaiting decision", r.body["detail"], "a debate phase is not resolved by force, as the original")
		require.Equal(t, before, c.expect(200, "GET", base+"/state", "", nil).body, "nothing changed")
		c.expect(200, "POST", base+"/advance", "", map[string]any{"action": "force_decision"})
		r = c.expect(400, "POST", base+"/rounds/"+round+"/decision", "", map[string]any{"agent_id": op, "decision": "save_all"})
		require.Contains(t, r.body["error"].(map[string]any)["message"], "Decision must be save_majority or save_minority")
		c.expect(200, "POST", base+"/advance", "", map[string]any{"action": "resolve_round"})
		c.expect(404, "GET", base+"/open-actions?agent_id=agent_missing", "", nil)
		c.expect(400, "GET", base+"/open-actions", "", nil)
		c.expect(400, "GET", base+"/state?version=x", "", nil)
		c.expect(400, "GET", base+"/state?version=1&wait=31", "", nil)
	})
}

// TestArenaLongPollAndEvents waits on one server for a change made through
// another sharing the backend, then reads the event stream.
func TestArenaLongPollAndEvents(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		a, b := newArenaAPI(t, st, false), newArenaAPI(t, st, true)
		game := a.expect(200, "POST", "/api/games", "", nil).body["game_id"].(string)
		base := "/api/games/" + game
		v := a.expect(200, "GET", base+"/state", "", nil).body["version"].(float64)
		type result struct {
			r  response
			at time.Time
		}
		done := make(chan result, 1)
		go func() {
			r := a.do("GET", fmt.Sprintf("%s/state?version=%d&wait=20", base, int(v)), "", nil)
			done <- result{r, time.Now()}
		}()
		time.Sleep(300 * time.Millisecond) // likely parked; either way it must see the change
		changed := time.Now()
		b.expect(200, "POST", base+"/agents/register", "", map[string]any{"display_name": "Alice"})
		select {
		case res := <-done:
			require.Equal(t, 200, res.r.status)
			require.Equal(t, v+1, res.r.body["version"])
			// Logged, not asserted: how fast depends on the machine. A
			// notifier that did not carry the change would leave the wait
			// to its 20 s end (its safety re-read is every 30 s), past the
			// 15 s bound below.
			t.Logf("long poll returned %v after the change", res.at.Sub(changed))
		case <-time.After(15 * time.Second):
			t.Fatal("the long poll did not return")
		}

		req, _ := http.NewRequest("GET", a.srv.URL+base+"/events", nil)
		req.Header.Set("Last-Event-ID", "0")
		res, err := a.srv.Client().Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
		sc := bufio.NewScanner(res.Body)
		var lines []string
		for len(lines) < 4 && sc.Scan() {
			if l := sc.Text(); l != "" {
				lines = append(lines, l)
			}
		}
		require.Equal(t, "id: 1", lines[0])
		require.Equal(t, "event: feed", lines[1])
		require.Contains(t, lines[2], `"agent_registered"`)
		require.Equal(t, "event: state", lines[3])
	})
}

// TestArenaOriginalWireFacts pins what the original's page and agents
// read where arena.md is silent: an error's detail, the feed newest first
// under a limit, the scoreboard's list, the board's branch as the
// current round's decision and nothing before it is decided, GET /skill.md with this server's base URL, GET /health.
func TestArenaOriginalWireFacts(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newArenaAPI(t, st, false)
		for _, r := range []response{
			c.expect(404, "GET", "/api/games/game_missing/state", "", nil),
			c.expect(400, "POST", "/api/games", "", map[string]any{"min_players": "x"}),
			c.expect(404, "GET", "/api/games/game_missing/nothing-here", "", nil),
		} {
			msg := r.body["error"].(map[string]any)["message"]
			require.NotEmpty(t, msg)
			require.Equal(t, msg, r.body["detail"], "the original's detail carries the message: %s", r.raw)
		}
		require.Equal(t, "Game not found", c.expect(404, "GET", "/api/games/game_missing/feed", "", nil).body["detail"])

		demo := c.expect(200, "POST", "/api/demo/create", "", nil).body
		base := "/api/games/" + demo["game_id"].(string)
		c.expect(200, "POST", base+"/start", "", nil)
		r := c.expect(400, "POST", base+"/start", "", nil)
		require.Equal(t, "Game already started", r.body["detail"])

		state := c.expect(200, "GET", base+"/state", "", nil).body
		require.Nil(t, state["board"].(map[string]any)["selected_branch"], "no decision yet")
		require.Equal(t, false, state["has_filler_agents"])
		c.expect(200, "POST", base+"/advance", "", map[string]any{"action": "force_decision"})
		state = c.expect(200, "GET", base+"/state", "", nil).body
		op := state["operator"].(map[string]any)["id"].(string)
		round := state["current_round_id"].(string)
		c.expect(200, "POST", base+"/rounds/"+round+"/decision", "", map[string]any{"agent_id": op, "decision": "save_minority"})
		state = c.expect(200, "GET", base+"/state", "", nil).body
		require.Equal(t, map[string]any{"selected_branch": nil, "resolution_state": "pending", "animation_version": 1.0, "survivors": []any{}, "lost": []any{}},
			state["board"], "round 2 is not decided: the board carries nothing of round 1")
		require.Nil(t, state["decision"])
		last := state["last_decision"].(map[string]any)
		require.Equal(t, round, last["round_id"], "the ended round's outcome is last_decision (Agora's console draws it)")
		require.Equal(t, "save_minority", last["decision"])
		for state["status"] != "game_completed" {
			c.expect(200, "POST", base+"/advance", "", map[string]any{"action": "force_decision"})
			state = c.expect(200, "GET", base+"/state", "", nil).body
			op, round := state["operator"].(map[string]any)["id"].(string), state["current_round_id"].(string)
			c.expect(200, "POST", base+"/rounds/"+round+"/decision", "", map[string]any{"agent_id": op, "decision": "save_minority"})
			state = c.expect(200, "GET", base+"/state", "", nil).body
		}
		board := state["board"].(map[string]any)
		require.Equal(t, "save_minority", board["selected_branch"], "the last round is decided: its decision is on the board")
		require.Equal(t, "resolved", board["resolution_state"])
		require.Equal(t, state["round_outcome"].(map[string]any)["survivors"], board["survivors"])
		require.Equal(t, state["round_outcome"].(map[string]any)["lost"], board["lost"])

		all := c.expect(200, "GET", base+"/feed?limit=1000", "", nil).body["items"].([]any)
		require.Greater(t, len(all), 6)
		for _, limit := range []int{1, 3, len(all)} {
			items := c.expect(200, "GET", fmt.Sprint(base, "/feed?limit=", limit), "", nil).body["items"].([]any)
			require.Equal(t, all[:limit], items, "limit %d keeps the newest", limit)
		}
		newest := all[0].(map[string]any)
		require.Equal(t, "game_completed", newest["payload"].(map[string]any)["type"], "the game's end is the latest event")
		require.Len(t, c.expect(200, "GET", base+"/feed", "", nil).body["items"], min(50, len(all)))
		for _, bad := range []string{"0", "-1", "1001", "x"} {
			c.expect(400, "GET", base+"/feed?limit="+bad, "", nil)
		}

		sb := c.expect(200, "GET", base+"/scoreboard", "", nil).body
		for i, row := range sb["scores"].([]any) {
			want := map[string]any{"agent_id": demo["agents"].([]any)[i].(map[string]any)["agent_id"], "display_name": []string{"Alice", "Bob", "Charlie"}[i]}
			row := row.(map[string]any)
			require.Equal(t, want["agent_id"], row["agent_id"])
			require.Equal(t, want["display_name"], row["display_name"])
			require.GreaterOrEqual(t, row["score"], 0.0)
		}

		res, err := http.Get(c.srv.URL + "/skill.md")
		require.NoError(t, err)
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		require.Equal(t, 200, res.StatusCode)
		require.Equal(t, "text/markdown; charset=utf-8", res.Header.Get("Content-Type"))
		require.Contains(t, string(body), "Base URL: **"+c.srv.URL+"**")
		require.Contains(t, string(body), c.srv.URL+"/arena/{game_id}")
		require.NotContains(t, string(body), "{{BASE}}")
		req, _ := http.NewRequest("GET", c.srv.URL+"/skill.md", nil)
		req.Header.Set("X-Forwarded-Proto", "https")
		req.Header.Set("X-Forwarded-Host", "arena.example.org")
		res, err = http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, _ = io.ReadAll(res.Body)
		res.Body.Close()
		require.Contains(t, string(body), "Base URL: **https://arena.example.org**")
		require.Equal(t, map[string]any{"status": "ok"}, c.expect(200, "GET", "/health", "", nil).body)
	})
}

// newArenaAPIWith is newArenaAPI over a service with opts.
func newArenaAPIWith(t *testing.T, st storetest.Stores, opts ...arena.Option) *apiClient {
	t.Helper()
	return serveArena(t, arena.New(st.Arena, append([]arena.Option{arena.WithNotifier(st.Notifier)}, opts...)...))
}

// TestArenaSkillFlow follows SKILL.md literally with one agent: create
// with min_players 1, register, start (fillers make up the table), then
// open-actions, act, and tick-filler?drain=true after every action or
// wait, until the game completes.
func TestArenaSkillFlow(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newArenaAPI(t, st, false)
		game := c.expect(200, "POST", "/api/games", "", map[string]any{"min_players": 1}).body["game_id"].(string)
		base := "/api/games/" + game
		me := c.expect(200, "POST", base+"/agents/register", "", map[string]any{"display_name": "YourBot"}).body["agent_id"].(string)
		started := c.expect(200, "POST", base+"/start", "", nil).body
		require.Len(t, started["fillers"], 2, "two fillers make up a table of three")
		state := c.expect(200, "GET", base+"/state", "", nil).body
		require.Equal(t, true, state["has_filler_agents"])
		acted := map[string]int{}
		for steps := 0; ; steps++ {
			require.Less(t, steps, 100, "the game did not complete")
			state = c.expect(200, "GET", base+"/state", "", nil).body
			if state["status"] == "game_completed" {
				break
			}
			oa := c.expect(200, "GET", base+"/open-actions?agent_id="+me, "", nil).body
			if oa["can_act"] == true {
				round := state["current_round_id"].(string)
				switch oa["allowed_action"] {
				case "argument":
					r := c.expect(200, "POST", base+"/rounds/"+round+"/arguments", "", map[string]any{"agent_id": me, "text": "Short argument."}).body
					require.NotEmpty(t, r["argument_id"])
					require.Equal(t, oa["current_phase"], r["phase"])
				case "decision":
					c.expect(200, "POST", base+"/rounds/"+round+"/decision", "", map[string]any{"agent_id": me, "decision": "save_minority"})
				}
				acted[oa["allowed_action"].(string)]++
			}
			tick := c.expect(200, "POST", base+"/tick-filler?drain=true", "", nil).body
			require.Equal(t, true, tick["drained"], "%v", tick)
			require.NotContains(t, tick, "error")
		}
		onTrack, operator := 0, 0
		for _, rd := range c.expect(200, "GET", base+"/history", "", nil).body["rounds"].([]any) {
			rd := rd.(map[string]any)
			if rd["operator"] == me {
				operator++
			} else {
				onTrack++
			}
		}
		require.Equal(t, 3*onTrack, acted["argument"], "three phases in each round on a track")
		require.Equal(t, operator, acted["decision"])
		require.Positive(t, operator)
		for _, cov := range state["coverage"].([]any) {
			require.Equal(t, true, cov.(map[string]any)["complete"])
		}
		feed := c.expect(200, "GET", base+"/feed?limit=1000", "", nil).body["items"].([]any)
		fillers := 0
		for _, it := range feed {
			it := it.(map[string]any)
			if it["type"] == "argument" && strings.HasPrefix(it["display_name"].(string), "Filler ") {
				fillers++
			}
		}
		require.Equal(t, 3*2*len(c.expect(200, "GET", base+"/history", "", nil).body["rounds"].([]any))-acted["argument"], fillers, "the fillers argued every phase they sat on a track")
	})
}

// TestArenaHeartbeatFlowWithAutoFillers follows HEARTBEAT.md literally
// with one agent on a server whose fillers play by themselves: no
// tick-filler, only open-actions, an action when allowed, and a wait.
func TestArenaHeartbeatFlowWithAutoFillers(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newArenaAPIWith(t, st, arena.WithAutoFillers(t.Context(), 0))
		require.NotContains(t, c.expect(200, "GET", "/api/games?status=waiting_for_agents", "", nil).raw, "game_")
		game := c.expect(200, "POST", "/api/games", "", map[string]any{}).body["game_id"].(string)
		base := "/api/games/" + game
		me := c.expect(200, "POST", base+"/agents/register", "", map[string]any{"display_name": "Heartbeat"}).body["agent_id"].(string)
		require.Equal(t, "ready_to_start", c.expect(200, "GET", base, "", nil).body["status"])
		c.expect(200, "POST", base+"/start", "", nil)
		version := 0.0
		for steps := 0; ; steps++ {
			require.Less(t, steps, 200, "the game did not complete")
			// Sleep and poll: here, wait for the next change.
			state := c.expect(200, "GET", fmt.Sprintf("%s/state?version=%d&wait=5", base, int(version)), "", nil).body
			version = state["version"].(float64)
			if state["status"] == "game_completed" {
				break
			}
			oa := c.expect(200, "GET", base+"/open-actions?agent_id="+me, "", nil).body
			if oa["can_act"] != true {
				continue
			}
			// The fillers play on meanwhile: a 400 means the phase moved on
			// since the state was read, and HEARTBEAT.md re-polls.
			round := state["current_round_id"].(string)
			var r response
			if oa["allowed_action"] == "argument" {
				r = c.do("POST", base+"/rounds/"+round+"/arguments", "", map[string]any{"agent_id": me, "text": "Every life counts."})
			} else {
				r = c.do("POST", base+"/rounds/"+round+"/decision", "", map[string]any{"agent_id": me, "decision": "save_majority"})
			}
			require.Contains(t, []int{200, 201, 400}, r.status, r.raw)
		}
		tick := c.expect(200, "POST", base+"/tick-filler", "", nil).body
		require.Equal(t, map[string]any{"game_id": game, "action": nil, "drained": true, "actions_count": 0.0}, tick, "nothing left to do")
	})
}

// TestArenaFillerRoutes: add-filler and tick-filler as the original has
// them — count 2 by default and at most 5, only before the start;
// tick-filler one action at a time with drain=false, a 404 for an unknown
// game.
func TestArenaFillerRoutes(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newArenaAPI(t, st, false)
		demo := c.expect(200, "POST", "/api/demo/create", "", nil).body
		game := demo["game_id"].(string)
		base := "/api/games/" + game
		added := c.expect(200, "POST", base+"/add-filler", "", nil).body
		require.EqualValues(t, 2, added["count"])
		require.Equal(t, "Filler Max", added["added"].([]any)[0].(map[string]any)["display_name"])
		added = c.expect(200, "POST", base+"/add-filler", "", map[string]any{"count": 1}).body
		require.Equal(t, "Filler Alex", added["added"].([]any)[0].(map[string]any)["display_name"])
		for _, n := range []any{0, 6, "2"} {
			c.expect(400, "POST", base+"/add-filler", "", map[string]any{"count": n})
		}
		require.Equal(t, "invalid_count", c.expect(400, "POST", base+"/add-filler", "", map[string]any{"count": 1.5}).errCode(t))
		added = c.expect(200, "POST", base+"/add-filler", "", `{"count":1.0}`).body
		require.EqualValues(t, 1, added["count"], "1.0 is an integer")
		added = c.expect(200, "POST", base+"/add-filler", "", `{"count":null}`).body
		require.EqualValues(t, 2, added["count"], "null is the default")
		c.expect(404, "POST", "/api/games/game_missing/add-filler", "", nil)
		c.expect(404, "POST", "/api/games/game_missing/tick-filler", "", nil)
		c.expect(400, "POST", base+"/tick-filler?drain=maybe", "", nil)
		require.Equal(t, map[string]any{"game_id": game, "action": nil}, c.expect(200, "POST", base+"/tick-filler?drain=false", "", nil).body, "nothing due before the start")
		c.expect(200, "POST", base+"/start", "", nil)
		r := c.expect(400, "POST", base+"/add-filler", "", nil)
		require.Equal(t, "Can only add fillers before game starts", r.body["detail"])

		state := c.expect(200, "GET", base+"/state", "", nil).body
		require.Equal(t, true, state["has_filler_agents"])
		one := c.expect(200, "POST", base+"/tick-filler?drain=false", "", nil).body
		require.Regexp(t, `^Filler \w+ argued: .+`, one["action"])
		require.NotContains(t, one, "actions_count")
		after := c.expect(200, "GET", base+"/state", "", nil).body
		require.Equal(t, state["version"].(float64)+1, after["version"], "one action, one change")
		all := c.expect(200, "POST", base+"/tick-filler", "", nil).body
		require.Equal(t, true, all["drained"])
		require.GreaterOrEqual(t, all["actions_count"], 1.0)
		left := 0
		seats := append(after["majority_agents"].([]any), after["minority_agents"].([]any)...)
		for _, seat := range seats {
			if !strings.HasPrefix(seat.(map[string]any)["display_name"].(string), "Filler ") {
				left++
			}
		}
		state = c.expect(200, "GET", base+"/state", "", nil).body
		require.Len(t, state["phase_activity"], len(seats)-left, "every filler on a track argued; the demo's agents did not")
	})
}

// TestArenaStartSeatsFillersUpToMinPlayers: as the original's start route
// seats fillers before it checks, a game created for seven that three
// agents joined starts with seven (fillers the other four), a game for one
// with one agent with the table's three; a game nobody joined is refused.
func TestArenaStartSeatsFillersUpToMinPlayers(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		c := newArenaAPI(t, st, false)
		for _, tc := range []struct{ minPlayers, agents, seated int }{{7, 3, 7}, {1, 1, 3}, {4, 5, 5}} {
			base := "/api/games/" + c.expect(200, "POST", "/api/games", "", map[string]any{"min_players": tc.minPlayers}).body["game_id"].(string)
			for i := range tc.agents {
				c.expect(200, "POST", base+"/agents/register", "", map[string]any{"display_name": fmt.Sprint("Agent ", i)})
			}
			require.Equal(t, "round_phase_1", c.expect(200, "POST", base+"/start", "", nil).body["status"])
			state := c.expect(200, "GET", base+"/state", "", nil).body
			require.Len(t, state["coverage"], tc.seated, "%+v", tc)
			require.NotNil(t, state["operator"])
			require.Len(t, state["majority_agents"], tc.seated-2)
			require.Len(t, state["minority_agents"], 1)
			fillers := 0
			for _, cv := range state["coverage"].([]any) {
				if strings.HasPrefix(cv.(map[string]any)["display_name"].(string), "Filler ") {
					fillers++
				}
			}
			require.Equal(t, tc.seated-tc.agents, fillers)
			require.Equal(t, fillers > 0, state["has_filler_agents"])
		}
		empty := "/api/games/" + c.expect(200, "POST", "/api/games", "", map[string]any{"min_players": 7}).body["game_id"].(string)
		r := c.expect(400, "POST", empty+"/start", "", nil)
		require.Equal(t, "Not enough agents to start", r.body["detail"])
		require.Equal(t, "waiting_for_agents", c.expect(200, "GET", empty, "", nil).body["status"])
	})
}

// readsArena counts the reads of an arena store.
type readsArena struct {
	arena.Store
	reads atomic.Int64
}

func (r *readsArena) GetGame(ctx context.Context, id string) (arena.Game, error) {
	r.reads.Add(1)
	return r.Store.GetGame(ctx, id)
}

func (r *readsArena) FeedAfter(ctx context.Context, id string, after int64, limit int) ([]arena.FeedItem, error) {
	r.reads.Add(1)
	return r.Store.FeedAfter(ctx, id, after, limit)
}

func (r *readsArena) FeedLatest(ctx context.Context, id string, limit int) ([]arena.FeedItem, error) {
	r.reads.Add(1)
	return r.Store.FeedLatest(ctx, id, limit)
}

// TestArenaSpectatorsReadNothingPerChange: twenty event streams follow a
// game on one server while another process plays it; every stream gets
// every argument as a feed event and every version as a state event, and
// the spectators' server reads the store for none of it — the items come
// with the notifier's events. A page asking for the state each stream
// announced (min_version) costs that server one read per change, not one
// per spectator.
func TestArenaSpectatorsReadNothingPerChange(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		counted := &readsArena{Store: st.Arena}
		spectators := serveArena(t, arena.New(counted, arena.WithNotifier(st.Notifier)))
		players := arena.New(st.Arena, arena.WithNotifier(st.Peer))
		ctx := t.Context()
		g, err := players.Create(ctx, 3, 0)
		require.NoError(t, err)
		for _, n := range []string{"A", "B", "C"} {
			_, err := players.Register(ctx, g.ID, n, nil)
			require.NoError(t, err)
		}
		g, err = players.Start(ctx, g.ID)
		require.NoError(t, err)

		const streams = 20
		type seen struct {
			args    int
			version int64
		}
		got := make(chan seen, streams)
		ready := make(chan struct{}, streams)
		for range streams {
			req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/api/games/%s/events?after=%d", spectators.srv.URL, g.ID, g.FeedLen), nil)
			res, err := spectators.srv.Client().Do(req)
			require.NoError(t, err)
			t.Cleanup(func() { res.Body.Close() })
			go func() {
				sc := bufio.NewScanner(res.Body)
				var s seen
				first := true
				for sc.Scan() {
					line := sc.Text()
					switch {
					case strings.HasPrefix(line, "data: ") && strings.Contains(line, `"type":"argument"`):
						s.args++
					case strings.HasPrefix(line, "data: {\"version\""):
						var v struct{ Version int64 }
						_ = json.Unmarshal([]byte(line[6:]), &v)
						s.version = v.Version
						if first {
							first = false
							ready <- struct{}{}
						}
						if s.args == 6 && v.Version == g.Version+6 {
							got <- s
							return
						}
					}
				}
			}()
		}
		for range streams {
			<-ready
		}
		before := counted.reads.Load()
		r := g.Current()
		for range 3 {
			for _, id := range tracks(r) {
				_, err := players.Argue(ctx, arena.ArgueParams{GameID: g.ID, RoundID: r.ID, AgentID: id, Text: "Every life counts."})
				require.NoError(t, err)
			}
		}
		for range streams {
			select {
			case s := <-got:
				require.Equal(t, 6, s.args)
			case <-time.After(20 * time.Second):
				t.Fatal("a stream did not see every change")
			}
		}
		require.Zero(t, counted.reads.Load()-before, "the streams read nothing for six changes")
		for range streams {
			spectators.expect(200, "GET", fmt.Sprintf("/api/games/%s/state?min_version=%d", g.ID, g.Version+6), "", nil)
		}
		require.EqualValues(t, 1, counted.reads.Load()-before, "one read for every page asking for the new state")
	})
}

func tracks(r *arena.Round) []string { return append(slices.Clone(r.Majority), r.Minority...) }

// TestArenaEventsWithoutNotifier: a service without a notifier still
// streams every change, by polling.
func TestArenaEventsWithoutNotifier(t *testing.T) {
	testbackend.Each(t, func(t *testing.T, st storetest.Stores) {
		svc := arena.New(st.Arena)
		c := serveArena(t, svc)
		g, err := svc.Create(t.Context(), 3, 0)
		require.NoError(t, err)
		req, _ := http.NewRequestWithContext(t.Context(), "GET", c.srv.URL+"/api/games/"+g.ID+"/events", nil)
		res, err := c.srv.Client().Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		_, err = svc.Register(t.Context(), g.ID, "Alice", nil)
		require.NoError(t, err)
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if strings.Contains(sc.Text(), `"agent_registered"`) {
				return
			}
		}
		t.Fatal("the registration never came")
	})
}
