package httpapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/internal/httpjson"
	"github.com/agorahq/agora/store"
)

// Arena returns the handler of the Trolley Problem Arena routes of
// seeds/arena.md under /api: games, agents, actions, state (with long
// poll), feed, scoreboard, history, open actions, a demo, and an SSE event
// stream. Mount it for "/api/games", "/api/games/" and "/api/demo/".
func Arena(svc *arena.Service, opts ...Option) http.Handler {
	a := &arenaAPI{svc: svc}
	rt := newRouter(newConfig(opts))
	open := func(fn func(http.ResponseWriter, *http.Request) error) route { return route{fn: fn} }
	rt.handle("POST", "/api/games", open(a.create))
	rt.handle("GET", "/api/games", open(a.list))
	rt.handle("GET", "/api/games/{game_id}", open(a.meta))
	rt.handle("POST", "/api/games/{game_id}/agents/register", open(a.register))
	rt.handle("POST", "/api/games/{game_id}/start", open(a.start))
	rt.handle("GET", "/api/games/{game_id}/state", open(a.state))
	rt.handle("GET", "/api/games/{game_id}/feed", open(a.feed))
	rt.handle("GET", "/api/games/{game_id}/scoreboard", open(a.scoreboard))
	rt.handle("GET", "/api/games/{game_id}/history", open(a.history))
	rt.handle("POST", "/api/games/{game_id}/rounds/{round_id}/arguments", open(a.argue))
	rt.handle("POST", "/api/games/{game_id}/rounds/{round_id}/decision", open(a.decide))
	rt.handle("POST", "/api/games/{game_id}/advance", open(a.advance))
	rt.handle("GET", "/api/games/{game_id}/open-actions", open(a.openActions))
	rt.handle("GET", "/api/games/{game_id}/events", open(a.events))
	rt.handle("POST", "/api/demo/create", open(a.demo))
	return rt
}

type arenaAPI struct {
	svc *arena.Service
}

func (a *arenaAPI) create(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		MinPlayers    json.RawMessage `json:"min_players"`
		PhaseTimeoutS json.RawMessage `json:"phase_timeout_s"`
	}
	if err := httpjson.DecodeOptional(w, r, &in); err != nil {
		return err
	}
	minPlayers, err := httpjson.OptionalInt("min_players", in.MinPlayers)
	if err != nil {
		return err
	}
	timeout, err := httpjson.OptionalInt("phase_timeout_s", in.PhaseTimeoutS)
	if err != nil {
		return err
	}
	mp, ts := 0, 0
	if minPlayers != nil {
		if *minPlayers == 0 {
			return httpjson.Invalid("invalid_min_players", "min_players must be at least %d", arena.DefaultMinPlayer)
		}
		mp = *minPlayers
	}
	if timeout != nil {
		ts = *timeout
	}
	g, err := a.svc.Create(r.Context(), mp, time.Duration(ts)*time.Second)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusCreated, map[string]any{"game_id": g.ID})
	return nil
}

func (a *arenaAPI) list(w http.ResponseWriter, r *http.Request) error {
	games, err := a.svc.List(r.Context(), arena.Status(r.URL.Query().Get("status")), 0)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, games)
	return nil
}

// currentPhase returns the round's phase, or nil before the first round.
func currentPhase(g arena.Game) *arena.Phase {
	if r := g.Current(); r != nil {
		p := r.Phase
		return &p
	}
	return nil
}

func (a *arenaAPI) meta(w http.ResponseWriter, r *http.Request) error {
	g, err := a.svc.Game(r.Context(), r.PathValue("game_id"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{
		"id": g.ID, "status": g.Status, "created_at": g.CreatedAt, "current_round_number": len(g.Rounds),
		"current_phase": currentPhase(g), "min_players": g.MinPlayers,
		// Beyond arena.md: the game's phase timeout (0: none) and when the
		// current phase moves on by itself (null: never).
		"phase_timeout_s": int(g.PhaseTimeout / time.Second), "phase_deadline": g.PhaseDeadline,
	})
	return nil
}

func (a *arenaAPI) register(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		DisplayName string  `json:"display_name"`
		Token       *string `json:"token"`
	}
	if err := httpjson.Decode(w, r, &in); err != nil {
		return err
	}
	ag, err := a.svc.Register(r.Context(), r.PathValue("game_id"), in.DisplayName, in.Token)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusCreated, map[string]any{"agent_id": ag.ID, "game_id": r.PathValue("game_id")})
	return nil
}

func (a *arenaAPI) start(w http.ResponseWriter, r *http.Request) error {
	g, err := a.svc.Start(r.Context(), r.PathValue("game_id"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"status": g.Status, "message": fmt.Sprintf("Game started with %d agents", len(g.Agents))})
	return nil
}

type seat struct {
	ID              string     `json:"id"`
	DisplayName     string     `json:"display_name"`
	Role            arena.Role `json:"role"`
	ArguedThisPhase *bool      `json:"argued_this_phase,omitempty"`
}

type board struct {
	SelectedBranch   *string  `json:"selected_branch"`
	ResolutionState  string   `json:"resolution_state"`
	AnimationVersion int      `json:"animation_version"`
	Survivors        []string `json:"survivors"`
	Lost             []string `json:"lost"`
}

// stateView is the payload of GET /state, as arena.md lays it out.
func stateView(g arena.Game) map[string]any {
	names := map[string]string{}
	for _, ag := range g.Agents {
		names[ag.ID] = ag.DisplayName
	}
	v := map[string]any{
		"game_id": g.ID, "status": g.Status, "current_round_number": len(g.Rounds),
		"current_round_id": nil, "current_phase": currentPhase(g), "operator": nil,
		"majority_agents": []seat{}, "minority_agents": []seat{}, "decision": nil, "round_outcome": nil,
		"scores": g.Scores, "coverage": g.Coverage(), "phase_activity": []string{},
		"last_event_at": g.LastEventAt, "version": g.Version,
		"phase_deadline": g.PhaseDeadline, // beyond arena.md: when the phase moves on by itself (null: never)
	}
	b := board{ResolutionState: "pending", AnimationVersion: g.AnimationCount, Survivors: []string{}, Lost: []string{}}
	if r := g.Current(); r != nil {
		v["current_round_id"] = r.ID
		v["operator"] = seat{ID: r.Operator, DisplayName: names[r.Operator], Role: arena.RoleOperator}
		argued := r.ArguedThisPhase()
		track := func(ids []string, role arena.Role) []seat {
			out := []seat{}
			for _, id := range ids {
				did := slices.Contains(argued, id)
				out = append(out, seat{ID: id, DisplayName: names[id], Role: role, ArguedThisPhase: &did})
			}
			return out
		}
		v["majority_agents"] = track(r.Majority, arena.RoleMajority)
		v["minority_agents"] = track(r.Minority, arena.RoleMinority)
		v["phase_activity"] = argued
		if r.Decision != "" {
			v["decision"] = r.Decision
			v["round_outcome"] = map[string]any{"survivors": r.Survivors, "lost": r.Lost}
		}
	}
	// The board shows the last resolved round: which branch the trolley
	// took (the track that was lost) and who survived.
	for i := len(g.Rounds) - 1; i >= 0; i-- {
		if r := g.Rounds[i]; r.Decision != "" {
			branch := "minority"
			if r.Decision == arena.SaveMinority {
				branch = "majority"
			}
			b.SelectedBranch, b.Survivors, b.Lost = &branch, r.Survivors, r.Lost
			if i == len(g.Rounds)-1 {
				b.ResolutionState = "resolved"
			}
			break
		}
	}
	v["board"] = b
	return v
}

func (a *arenaAPI) state(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("game_id")
	q := r.URL.Query()
	wait, err := httpjson.QueryInt(r, "wait")
	if err != nil {
		return err
	}
	if wait < 0 || wait > int(arena.MaxWait/time.Second) {
		return httpjson.Invalid("invalid_wait", "wait must be from 0 to %d seconds", int(arena.MaxWait/time.Second))
	}
	var g arena.Game
	if q.Has("version") {
		version, err := strconv.ParseInt(q.Get("version"), 10, 64)
		if err != nil {
			return httpjson.Invalid("invalid_version", "version must be an integer")
		}
		g, err = a.svc.WaitChange(r.Context(), id, version, time.Duration(wait)*time.Second)
		if err != nil {
			return err
		}
	} else if g, err = a.svc.Game(r.Context(), id); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, stateView(g))
	return nil
}

func (a *arenaAPI) feed(w http.ResponseWriter, r *http.Request) error {
	limit, err := httpjson.QueryInt(r, "limit")
	if err != nil {
		return err
	}
	if limit == 0 {
		limit = 50
	}
	if limit < 1 || limit > 1000 {
		return httpjson.Invalid("invalid_limit", "limit must be from 1 to 1000")
	}
	g, err := a.svc.Game(r.Context(), r.PathValue("game_id"))
	if err != nil {
		return err
	}
	items := g.Feed[max(0, len(g.Feed)-limit):]
	httpjson.Write(w, http.StatusOK, map[string]any{"game_id": g.ID, "items": items})
	return nil
}

func (a *arenaAPI) scoreboard(w http.ResponseWriter, r *http.Request) error {
	g, err := a.svc.Game(r.Context(), r.PathValue("game_id"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"game_id": g.ID, "scores": g.Scores, "coverage": g.Coverage()})
	return nil
}

func (a *arenaAPI) history(w http.ResponseWriter, r *http.Request) error {
	g, err := a.svc.Game(r.Context(), r.PathValue("game_id"))
	if err != nil {
		return err
	}
	rounds := []map[string]any{}
	for _, rd := range g.Rounds {
		if rd.Decision == "" {
			continue
		}
		rounds = append(rounds, map[string]any{
			"round_id": rd.ID, "round_number": rd.Number, "operator": rd.Operator, "majority": rd.Majority,
			"minority": rd.Minority, "decision": rd.Decision, "forced": rd.Forced,
			"survivors": rd.Survivors, "lost": rd.Lost, "arguments": rd.Arguments, "resolved_at": rd.EndedAt,
		})
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"game_id": g.ID, "rounds": rounds})
	return nil
}

func (a *arenaAPI) argue(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		AgentID string `json:"agent_id"`
		Text    string `json:"text"`
	}
	if err := httpjson.Decode(w, r, &in); err != nil {
		return err
	}
	g, err := a.svc.Argue(r.Context(), r.PathValue("game_id"), r.PathValue("round_id"), in.AgentID, bearer(r), in.Text)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusCreated, map[string]any{"ok": true, "version": g.Version, "current_phase": currentPhase(g)})
	return nil
}

func (a *arenaAPI) decide(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		AgentID  string         `json:"agent_id"`
		Decision arena.Decision `json:"decision"`
	}
	if err := httpjson.Decode(w, r, &in); err != nil {
		return err
	}
	g, err := a.svc.Decide(r.Context(), r.PathValue("game_id"), r.PathValue("round_id"), in.AgentID, bearer(r), in.Decision)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"ok": true, "version": g.Version, "status": g.Status})
	return nil
}

func (a *arenaAPI) advance(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Action arena.AdvanceAction `json:"action"`
	}
	if err := httpjson.Decode(w, r, &in); err != nil {
		return err
	}
	g, err := a.svc.Advance(r.Context(), r.PathValue("game_id"), in.Action)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"ok": true, "status": g.Status, "current_phase": currentPhase(g), "version": g.Version})
	return nil
}

var errAgentNotFound = &store.Error{Kind: store.ErrNotFound, Code: "agent_not_found", Message: "Agent not found in this game"}

func (a *arenaAPI) openActions(w http.ResponseWriter, r *http.Request) error {
	agentID := r.URL.Query().Get("agent_id")
	if agentID == "" {
		return httpjson.Invalid("invalid_agent_id", "agent_id is required")
	}
	g, err := a.svc.Game(r.Context(), r.PathValue("game_id"))
	if err != nil {
		return err
	}
	known := slices.ContainsFunc(g.Agents, func(ag arena.Agent) bool { return ag.ID == agentID })
	if !known {
		return errAgentNotFound
	}
	out := map[string]any{"agent_id": agentID, "can_act": false, "allowed_action": nil, "current_phase": currentPhase(g), "role": nil}
	if rd := g.Current(); rd != nil && g.Status != arena.StatusCompleted {
		var role arena.Role
		switch {
		case rd.Operator == agentID:
			role = arena.RoleOperator
		case slices.Contains(rd.Majority, agentID):
			role = arena.RoleMajority
		case slices.Contains(rd.Minority, agentID):
			role = arena.RoleMinority
		}
		out["role"] = role
		debating := strings.HasPrefix(string(rd.Phase), "phase_")
		switch {
		case role == arena.RoleOperator && rd.Phase == arena.PhaseAwaiting:
			out["can_act"], out["allowed_action"] = true, "decision"
		case role != arena.RoleOperator && debating && !slices.Contains(rd.ArguedThisPhase(), agentID):
			out["can_act"], out["allowed_action"] = true, "argument"
		}
		out["round_id"] = rd.ID
	}
	httpjson.Write(w, http.StatusOK, out)
	return nil
}

func (a *arenaAPI) demo(w http.ResponseWriter, r *http.Request) error {
	g, agents, err := a.svc.Demo(r.Context())
	if err != nil {
		return err
	}
	out := []map[string]any{}
	for _, ag := range agents {
		out = append(out, map[string]any{"agent_id": ag.ID, "display_name": ag.DisplayName})
	}
	httpjson.Write(w, http.StatusCreated, map[string]any{"game_id": g.ID, "agents": out})
	return nil
}

// events streams a game as server-sent events: each feed item as an event
// "feed" whose id is its position in the feed, and after every change an
// event "state" carrying the version. A client reconnecting with
// Last-Event-ID receives the feed items after that position.
func (a *arenaAPI) events(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id := r.PathValue("game_id")
	sub, err := a.svc.Subscribe(ctx, id)
	if err != nil {
		return err
	}
	var hints <-chan []byte
	if sub != nil {
		defer sub.Close()
		hints = sub.C
	}
	g, err := a.svc.Game(ctx, id) // an unknown game is a 404, before the stream starts
	if err != nil {
		return err
	}
	sent := 0
	if last, err := strconv.Atoi(r.Header.Get("Last-Event-ID")); err == nil && last > 0 {
		sent = min(last, len(g.Feed))
	}
	version, first := int64(-1), true
	httpjson.Stream(w, r, hints, time.Second, func(w io.Writer, _ []byte) error {
		if !first {
			if g, err = a.svc.Game(ctx, id); err != nil {
				return err
			}
		}
		first = false
		for ; sent < len(g.Feed); sent++ {
			data, _ := json.Marshal(g.Feed[sent])
			fmt.Fprintf(w, "id: %d\nevent: feed\ndata: %s\n\n", sent+1, data)
		}
		if g.Version != version {
			version = g.Version
			fmt.Fprintf(w, "event: state\ndata: {\"version\":%d,\"status\":%q}\n\n", g.Version, g.Status)
		}
		return nil
	})
	return nil
}
