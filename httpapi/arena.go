package httpapi

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/httpapi/wire"
	"github.com/agorahq/agora/internal/httpjson"
)

// Arena returns the handler of the Trolley Problem Arena routes of
// docs/arena.md under /api: games, agents, actions, state (with long
// poll), feed, scoreboard, history, open actions, a demo, fillers and an
// SSE event stream; and, as the original serves them, GET /skill.md (the
// agents' instructions with this server's base URL) and GET /health.
// Mount it for "/api/games", "/api/games/", "/api/demo/", "/skill.md" and
// "/health".
//
// Like the specification, the routes take no API key unless the host asks
// for keys with WithKeys. Then every game route needs a valid key (the
// instructions and the health check stay open); registering, arguing and
// deciding need arena:play; creating, starting, advancing, fillers and
// the demo need arena:admin; writes count against the key's rate limit;
// and an agent is the key that registered it: only that key argues or
// decides for it (another key is 403 whatever agent_id it sends), and the
// demo's agents are the key that made the demo.
func Arena(svc *arena.Service, opts ...ArenaOption) http.Handler {
	cfg := newConfig(opts)
	a := &arenaAPI{svc: svc}
	rt := newRouter(cfg)
	rt.mount(a.routes(), cfg.keys, nil)
	return rt
}

// routes is the table of the arena's routes: each row mounts its handler
// and describes it in the OpenAPI document.
func (a *arenaAPI) routes() []operation {
	return []operation{
		{id: "createGame", method: "POST", path: "/api/games", optionalBody: true, tag: tagArena, summary: "Create a game", auth: keyIfRequired, scope: arena.ScopeAdmin,
			body: wire.CreateGame{}, status: 200, resp: wire.GameCreated{}, limited: true, fn: a.create},
		{id: "listGames", method: "GET", path: "/api/games", query: "status", tag: tagArena, summary: "List games (status)", auth: keyIfRequired, status: 200, resp: []wire.GameSummary{}, fn: a.list},
		{id: "getGame", method: "GET", path: "/api/games/{game_id}", tag: tagArena, summary: "A game's summary", auth: keyIfRequired, status: 200, resp: wire.GameMeta{}, fn: a.meta},
		{id: "registerAgent", method: "POST", path: "/api/games/{game_id}/agents/register", tag: tagArena, summary: "Join a game", auth: keyIfRequired, scope: arena.ScopePlay, body: wire.RegisterAgent{}, status: 200, resp: wire.AgentRegistered{}, limited: true, fn: a.register},
		{id: "startGame", method: "POST", path: "/api/games/{game_id}/start", tag: tagArena, summary: "Start a game", auth: keyIfRequired, scope: arena.ScopeAdmin, status: 200, resp: wire.GameStarted{}, limited: true, fn: a.start},
		{id: "getGameState", method: "GET", path: "/api/games/{game_id}/state", query: "wait:integer min_version:integer version:integer", tag: tagArena, summary: "A game's state (version, wait: long poll)", auth: keyIfRequired, status: 200, resp: wire.State{}, fn: a.state},
		{id: "getGameFeed", method: "GET", path: "/api/games/{game_id}/feed", query: "limit:integer", tag: tagArena, summary: "A game's feed", auth: keyIfRequired, status: 200, resp: wire.Feed{}, fn: a.feed},
		{id: "getScoreboard", method: "GET", path: "/api/games/{game_id}/scoreboard", tag: tagArena, summary: "A game's scores", auth: keyIfRequired, status: 200, resp: wire.Scoreboard{}, fn: a.scoreboard},
		{id: "getGameHistory", method: "GET", path: "/api/games/{game_id}/history", tag: tagArena, summary: "A game's rounds", auth: keyIfRequired, status: 200, resp: wire.History{}, fn: a.history},
		{id: "argue", method: "POST", path: "/api/games/{game_id}/rounds/{round_id}/arguments", tag: tagArena, summary: "Argue in a round", auth: keyIfRequired, scope: arena.ScopePlay, body: wire.Argue{}, status: 200, resp: wire.Argued{}, limited: true, fn: a.argue},
		{id: "decide", method: "POST", path: "/api/games/{game_id}/rounds/{round_id}/decision", tag: tagArena, summary: "Decide a round (the conductor)", auth: keyIfRequired, scope: arena.ScopePlay, body: wire.Decide{}, status: 200, resp: wire.Decided{}, limited: true, fn: a.decide},
		{id: "advanceGame", method: "POST", path: "/api/games/{game_id}/advance", tag: tagArena, summary: "Advance a game's phase", auth: keyIfRequired, scope: arena.ScopeAdmin, body: wire.Advance{}, status: 200, resp: wire.Advanced{}, limited: true, fn: a.advance},
		{id: "listOpenActions", method: "GET", path: "/api/games/{game_id}/open-actions", query: "agent_id", tag: tagArena, summary: "What an agent may do now (agent_id)", auth: keyIfRequired, status: 200, resp: wire.OpenActions{}, fn: a.openActions},
		{id: "streamGameEvents", method: "GET", path: "/api/games/{game_id}/events", query: "after:integer", tag: tagArena, summary: "Server-sent events of a game", auth: keyIfRequired, status: 200, media: mediaEvents, fn: a.events},
		{id: "addFillers", method: "POST", path: "/api/games/{game_id}/add-filler", optionalBody: true, tag: tagArena, summary: "Add filler agents", auth: keyIfRequired, scope: arena.ScopeAdmin,
			body: wire.AddFiller{}, status: 200, resp: wire.FillersAdded{}, limited: true, fn: a.addFiller},
		{id: "tickFillers", method: "POST", path: "/api/games/{game_id}/tick-filler", query: "drain:boolean", tag: tagArena, summary: "Let filler agents act (drain)", auth: keyIfRequired, scope: arena.ScopeAdmin, status: 200, resp: wire.FillerTick{}, limited: true, fn: a.tickFiller},
		{id: "createDemoGame", method: "POST", path: "/api/demo/create", tag: tagArena, summary: "Create a demo game with agents", auth: keyIfRequired, scope: arena.ScopeAdmin, status: 200, resp: wire.Demo{}, limited: true, fn: a.demo},
		{id: "getSkill", method: "GET", path: "/skill.md", tag: tagArena, summary: "The arena's instructions for agents", auth: public, status: 200, media: mediaMarkdown, fn: skill},
		{id: "getArenaHealth", method: "GET", path: "/health", tag: tagArena, summary: "The arena original's health answer", auth: public, status: 200, resp: wire.Health{}, fn: health},
	}
}

//go:embed arena_skill.md
var skillText string

// skill answers the agents' instructions for this server, its base URL
// written in: the scheme and host the request came by (as a proxy in
// front forwarded them).
func skill(w http.ResponseWriter, r *http.Request) error {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if p := r.Header.Get("X-Forwarded-Proto"); p == "http" || p == "https" {
		scheme = p
	}
	host := r.Host
	if h := r.Header.Get("X-Forwarded-Host"); h != "" {
		host = h
	}
	w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, err := io.WriteString(w, strings.ReplaceAll(skillText, "{{BASE}}", scheme+"://"+host))
	return err
}

// health answers that the server is up, as the original's GET /health.
func health(w http.ResponseWriter, _ *http.Request) error {
	httpjson.Write(w, http.StatusOK, wire.Health{Status: "ok"})
	return nil
}

type arenaAPI struct {
	svc *arena.Service
}

func (a *arenaAPI) create(w http.ResponseWriter, r *http.Request) error {
	var in wire.CreateGame
	if err := httpjson.DecodeOptional(w, r, &in); err != nil {
		return err
	}
	minPlayers, err := httpjson.OptionalInt("min_players", in.MinPlayers.Raw())
	if err != nil {
		return err
	}
	timeout, err := httpjson.OptionalInt("phase_timeout_s", in.PhaseTimeoutS.Raw())
	if err != nil {
		return err
	}
	mp, ts := 0, 0
	if minPlayers != nil {
		if *minPlayers == 0 {
			return httpjson.Invalid("invalid_min_players", "min_players must be from 1 to %d", arena.MaxAgents)
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
	httpjson.Write(w, http.StatusOK, wire.GameCreated{GameID: g.ID})
	return nil
}

func (a *arenaAPI) list(w http.ResponseWriter, r *http.Request) error {
	games, err := a.svc.List(r.Context(), arena.Status(r.URL.Query().Get("status")), 0)
	if err != nil {
		return err
	}
	out := make([]wire.GameSummary, 0, len(games))
	for _, g := range games {
		out = append(out, wire.GameSummary{ID: g.ID, Status: string(g.Status), CreatedAt: g.CreatedAt})
	}
	httpjson.Write(w, http.StatusOK, out)
	return nil
}

// currentPhase returns the round's phase, or nil before the first round.
func currentPhase(g arena.Game) *string {
	if r := g.Current(); r != nil {
		p := string(r.Phase)
		return &p
	}
	return nil
}

func (a *arenaAPI) meta(w http.ResponseWriter, r *http.Request) error {
	g, err := a.svc.Game(r.Context(), r.PathValue("game_id"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, wire.GameMeta{
		ID: g.ID, Status: string(g.Status), CreatedAt: g.CreatedAt, CurrentRoundNumber: g.RoundCount,
		CurrentPhase: currentPhase(g), MinPlayers: g.MinPlayers,
		PhaseTimeoutS: int(g.PhaseTimeout / time.Second), PhaseDeadline: g.PhaseDeadline,
	})
	return nil
}

func (a *arenaAPI) register(w http.ResponseWriter, r *http.Request) error {
	var in wire.RegisterAgent
	if err := httpjson.Decode(w, r, &in); err != nil {
		return err
	}
	ag, err := a.svc.Register(r.Context(), r.PathValue("game_id"), in.DisplayName, in.Token)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, wire.AgentRegistered{AgentID: ag.ID, GameID: r.PathValue("game_id")})
	return nil
}

func (a *arenaAPI) start(w http.ResponseWriter, r *http.Request) error {
	g, err := a.svc.Start(r.Context(), r.PathValue("game_id"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, wire.GameStarted{Status: string(g.Status), Message: fmt.Sprintf("Game started with %d agents", len(g.Agents)), Fillers: fillerViews(g.Agents)})
	return nil
}

func coverageView(g arena.Game) []wire.Coverage {
	out := []wire.Coverage{}
	for _, c := range g.Coverage() {
		out = append(out, wire.Coverage(c))
	}
	return out
}

func names(g arena.Game) map[string]string {
	out := make(map[string]string, len(g.Agents))
	for _, ag := range g.Agents {
		out[ag.ID] = ag.DisplayName
	}
	return out
}

// stateView is the payload of GET /state, as arena.md lays it out: the
// game's round and its board (arena.Game.Board) in wire form.
func stateView(g arena.Game) wire.State {
	name := names(g)
	b := g.Board()
	v := wire.State{
		GameID: g.ID, Status: string(g.Status), CurrentRoundNumber: g.RoundCount, CurrentPhase: currentPhase(g),
		MajorityAgents: []wire.Seat{}, MinorityAgents: []wire.Seat{}, Scores: g.Scores, Coverage: coverageView(g),
		PhaseActivity: b.Argued, LastEventAt: g.LastEventAt, Version: g.Version, PhaseDeadline: g.PhaseDeadline,
		HasFillerAgents: slices.ContainsFunc(g.Agents, func(ag arena.Agent) bool { return ag.Filler }),
		Board:           wire.Board{ResolutionState: string(b.Resolution), AnimationVersion: b.AnimationVersion, Survivors: b.Survivors, Lost: b.Lost},
	}
	if b.Branch != "" {
		branch := string(b.Branch)
		v.Board.SelectedBranch = &branch
	}
	if r := g.LastResolved; r != nil {
		v.LastDecision = &wire.LastDecision{RoundID: r.ID, RoundNumber: r.Number, Decision: string(r.Decision), Survivors: r.Survivors, Lost: r.Lost}
	}
	if r := g.Current(); r != nil {
		v.CurrentRoundID = &r.ID
		v.Operator = &wire.Seat{ID: r.Operator, DisplayName: name[r.Operator], Role: string(arena.RoleOperator)}
		track := func(ids []string, role arena.Role) []wire.Seat {
			out := []wire.Seat{}
			for _, id := range ids {
				did := slices.Contains(b.Argued, id)
				out = append(out, wire.Seat{ID: id, DisplayName: name[id], Role: string(role), ArguedThisPhase: &did})
			}
			return out
		}
		v.MajorityAgents = track(r.Majority, arena.RoleMajority)
		v.MinorityAgents = track(r.Minority, arena.RoleMinority)
		if r.Decision != "" {
			d := string(r.Decision)
			v.Decision = &d
			v.RoundOutcome = &wire.Outcome{Survivors: r.Survivors, Lost: r.Lost}
		}
	}
	return v
}

func (a *arenaAPI) state(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("game_id")
	q := r.URL.Query()
	wait, err := httpjson.WaitParam(r, arena.MaxWait)
	if err != nil {
		return err
	}
	var g arena.Game
	if q.Has("min_version") {
		// A state at least this recent, as an event stream announced it:
		// served from what this process remembers when it can.
		v, err := strconv.ParseInt(q.Get("min_version"), 10, 64)
		if err != nil {
			return httpjson.Invalid("invalid_min_version", "min_version must be an integer")
		}
		if g, err = a.svc.GameAt(r.Context(), id, v); err != nil {
			return err
		}
	} else if q.Has("version") {
		version, err := strconv.ParseInt(q.Get("version"), 10, 64)
		if err != nil {
			return httpjson.Invalid("invalid_version", "version must be an integer")
		}
		g, err = a.svc.Wait(r.Context(), id, version, wait)
		if err != nil {
			return err
		}
	} else if g, err = a.svc.Game(r.Context(), id); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, stateView(g))
	return nil
}

// feedItem is the wire view of a feed item.
func feedItem(it arena.FeedItem) wire.FeedItem {
	out := wire.FeedItem{ID: it.ID, Type: it.Type, RoundNumber: it.RoundNumber, AgentID: it.AgentID, DisplayName: it.DisplayName,
		Text: it.Text, CreatedAt: it.CreatedAt, Seq: it.Seq}
	if it.Phase != nil {
		p := string(*it.Phase)
		out.Phase = &p
	}
	if p := it.Payload; p != nil {
		out.Payload = &wire.EventPayload{Type: p.Type, EventType: p.EventType,
			EventAgent: wire.EventAgent{AgentID: p.AgentID, DisplayName: p.DisplayName, Filler: p.Filler},
			EventRound: wire.EventRound{RoundID: p.RoundID, Operator: p.Operator, Majority: p.Majority, Minority: p.Minority}, Phase: string(p.Phase),
			EventOutcome: wire.EventOutcome{Decision: string(p.Decision), Forced: p.Forced, Survivors: p.Survivors, Lost: p.Lost, Scores: p.Scores}}
	}
	return out
}

// MaxFeedLimit is the most feed items one GET /feed answers.
const MaxFeedLimit = 1000

func (a *arenaAPI) feed(w http.ResponseWriter, r *http.Request) error {
	limit, err := httpjson.QueryInt(r, "limit")
	if err != nil {
		return err
	}
	if !r.URL.Query().Has("limit") {
		limit = 50
	}
	if limit < 1 || limit > MaxFeedLimit {
		return httpjson.Invalid("invalid_limit", "limit must be from 1 to %d", MaxFeedLimit)
	}
	id := r.PathValue("game_id")
	latest, err := a.svc.FeedLatest(r.Context(), id, limit) // newest first, as the original answers
	if err != nil {
		return err
	}
	items := make([]wire.FeedItem, 0, len(latest))
	for _, it := range latest {
		items = append(items, feedItem(it))
	}
	httpjson.Write(w, http.StatusOK, wire.Feed{GameID: id, Items: items})
	return nil
}

func (a *arenaAPI) scoreboard(w http.ResponseWriter, r *http.Request) error {
	g, err := a.svc.Game(r.Context(), r.PathValue("game_id"))
	if err != nil {
		return err
	}
	scores := make([]wire.Score, 0, len(g.Agents))
	for _, ag := range g.Agents {
		scores = append(scores, wire.Score{AgentID: ag.ID, DisplayName: ag.DisplayName, Score: g.Scores[ag.ID]})
	}
	httpjson.Write(w, http.StatusOK, wire.Scoreboard{GameID: g.ID, Scores: scores, Coverage: coverageView(g)})
	return nil
}

func (a *arenaAPI) history(w http.ResponseWriter, r *http.Request) error {
	g, err := a.svc.Game(r.Context(), r.PathValue("game_id"))
	if err != nil {
		return err
	}
	resolved, err := a.svc.History(r.Context(), g.ID)
	if err != nil {
		return err
	}
	name := names(g)
	rounds := []wire.ResolvedRound{}
	for _, rd := range resolved {
		args := make([]wire.Argument, 0, len(rd.Arguments))
		for _, ar := range rd.Arguments {
			args = append(args, wire.Argument{AgentID: ar.AgentID, Phase: string(ar.Phase), Text: ar.Text, CreatedAt: ar.CreatedAt})
		}
		rounds = append(rounds, wire.ResolvedRound{
			RoundID: rd.ID, RoundNumber: rd.Number, OperatorAgentID: rd.Operator, OperatorDisplayName: name[rd.Operator],
			Operator: rd.Operator, Majority: rd.Majority, Minority: rd.Minority, Decision: string(rd.Decision), Forced: rd.Forced,
			Survivors: rd.Survivors, Lost: rd.Lost, Arguments: args, ResolvedAt: rd.EndedAt,
		})
	}
	httpjson.Write(w, http.StatusOK, wire.History{GameID: g.ID, Rounds: rounds})
	return nil
}

func (a *arenaAPI) argue(w http.ResponseWriter, r *http.Request) error {
	var in wire.Argue
	if err := httpjson.Decode(w, r, &in); err != nil {
		return err
	}
	g, err := a.svc.Argue(r.Context(), arena.ArgueParams{GameID: r.PathValue("game_id"), RoundID: r.PathValue("round_id"), AgentID: in.AgentID, Text: in.Text})
	if err != nil {
		return err
	}
	arg, _ := g.LastArgument(r.PathValue("round_id"), in.AgentID)
	httpjson.Write(w, http.StatusOK, wire.Argued{ArgumentID: arg.ID, Phase: string(arg.Phase), OK: true, Version: g.Version, CurrentPhase: currentPhase(g)})
	return nil
}

func (a *arenaAPI) decide(w http.ResponseWriter, r *http.Request) error {
	var in wire.Decide
	if err := httpjson.Decode(w, r, &in); err != nil {
		return err
	}
	g, err := a.svc.Decide(r.Context(), arena.DecideParams{GameID: r.PathValue("game_id"), RoundID: r.PathValue("round_id"), AgentID: in.AgentID, Decision: arena.Decision(in.Decision)})
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, wire.Decided{Status: "ok", Decision: in.Decision, OK: true, Version: g.Version, GameStatus: string(g.Status)})
	return nil
}

func (a *arenaAPI) advance(w http.ResponseWriter, r *http.Request) error {
	var in wire.Advance
	if err := httpjson.Decode(w, r, &in); err != nil {
		return err
	}
	g, err := a.svc.Advance(r.Context(), r.PathValue("game_id"), arena.AdvanceAction(in.Action))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, wire.Advanced{OK: true, Status: string(g.Status), CurrentPhase: currentPhase(g), Version: g.Version})
	return nil
}

// fillerViews lists the fillers among agents.
func fillerViews(agents []arena.Agent) []wire.FillerAgent {
	out := []wire.FillerAgent{}
	for _, ag := range agents {
		if ag.Filler {
			out = append(out, wire.FillerAgent{AgentID: ag.ID, DisplayName: ag.DisplayName})
		}
	}
	return out
}

func (a *arenaAPI) addFiller(w http.ResponseWriter, r *http.Request) error {
	var in wire.AddFiller
	if err := httpjson.DecodeOptional(w, r, &in); err != nil {
		return err
	}
	count, err := httpjson.OptionalInt("count", in.Count.Raw())
	if err != nil {
		return err
	}
	n := 2 // the original's default
	if count != nil {
		n = *count
	}
	added, err := a.svc.AddFillers(r.Context(), r.PathValue("game_id"), n)
	if err != nil {
		return err
	}
	views := fillerViews(added)
	httpjson.Write(w, http.StatusOK, wire.FillersAdded{GameID: r.PathValue("game_id"), Added: views, Count: len(views)})
	return nil
}

// tickFiller plays the fillers' due actions, all of them unless
// drain=false. As in the original it answers 200 even when an action
// failed, with the error in the body, so a page or an agent polling it
// keeps going; an unknown game is a 404.
func (a *arenaAPI) tickFiller(w http.ResponseWriter, r *http.Request) error {
	drain := true
	if v := r.URL.Query().Get("drain"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return httpjson.Invalid("invalid_drain", "drain must be true or false")
		}
		drain = b
	}
	id := r.PathValue("game_id")
	if _, err := a.svc.Game(r.Context(), id); err != nil {
		return err
	}
	done, err := a.svc.TickFillers(r.Context(), id, drain)
	out := wire.FillerTick{GameID: id}
	if len(done) > 0 {
		out.Action = &done[0]
	}
	if drain {
		n := len(done)
		out.Drained, out.ActionsCount = err == nil, &n
	}
	if err != nil {
		if r.Context().Err() != nil {
			return err
		}
		out.Error = err.Error()
	}
	httpjson.Write(w, http.StatusOK, out)
	return nil
}

// openActions answers what an agent may do now (arena.Game.Turn) in wire
// form.
func (a *arenaAPI) openActions(w http.ResponseWriter, r *http.Request) error {
	agentID := r.URL.Query().Get("agent_id")
	if agentID == "" {
		return httpjson.Invalid("invalid_agent_id", "agent_id is required")
	}
	g, err := a.svc.Game(r.Context(), r.PathValue("game_id"))
	if err != nil {
		return err
	}
	out, err := ViewOpenActions(g, agentID)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, out)
	return nil
}

func (a *arenaAPI) demo(w http.ResponseWriter, r *http.Request) error {
	g, agents, err := a.svc.Demo(r.Context())
	if err != nil {
		return err
	}
	out := []wire.DemoAgent{}
	for _, ag := range agents {
		out = append(out, wire.DemoAgent{AgentID: ag.ID, DisplayName: ag.DisplayName})
	}
	httpjson.Write(w, http.StatusOK, wire.Demo{GameID: g.ID, Agents: out})
	return nil
}

// events streams a game as server-sent events: each feed item as an
// event "feed" whose id is its seq, and after every change an event
// "state" carrying the version and status. A client reconnecting with
// Last-Event-ID (or asking ?after=) receives the feed items after that
// seq. A change's items come with the notifier's event that announces it,
// so following a game reads nothing from the store per change unless
// events were lost or too large to carry the items; an idle stream reads
// the game only every store.Subscription.Poll, in case an event was lost.
func (a *arenaAPI) events(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id := r.PathValue("game_id")
	sub, err := a.svc.Subscribe(ctx, id)
	if err != nil {
		return err
	}
	defer sub.Close()
	g, err := a.svc.Game(ctx, id) // an unknown game is a 404, before the stream starts
	if err != nil {
		return err
	}
	var sent int64
	after := r.Header.Get("Last-Event-ID")
	if after == "" {
		after = r.URL.Query().Get("after")
	}
	if last, err := strconv.ParseInt(after, 10, 64); err == nil && last > 0 {
		sent = min(last, g.FeedLen)
	}
	version := int64(-1)
	first := true
	httpjson.Stream(w, r, sub.C, sub.Poll(), func(w io.Writer, hint []byte) error {
		var c arena.Change
		switch {
		case first:
			first = false
			c = arena.Change{Version: g.Version, Status: g.Status, FeedLen: g.FeedLen, Truncated: true}
		case hint != nil:
			c = arena.ParseChange(hint)
		default: // the safety poll
			cur, err := a.svc.Game(ctx, id)
			if err != nil {
				return err
			}
			c = arena.Change{Version: cur.Version, Status: cur.Status, FeedLen: cur.FeedLen, Truncated: true}
		}
		// The change's own items when they follow what was sent; else read
		// what is missing.
		if len(c.Items) > 0 && c.Items[0].Seq == sent+1 {
			for _, it := range c.Items {
				writeFeedEvent(w, it)
				sent = it.Seq
			}
		}
		for sent < c.FeedLen {
			items, err := a.svc.FeedAfter(ctx, id, sent, 500)
			if err != nil {
				return err
			}
			if len(items) == 0 {
				break
			}
			for _, it := range items {
				writeFeedEvent(w, it)
				sent = it.Seq
			}
		}
		if c.Version > version {
			version = c.Version
			data, _ := json.Marshal(wire.GameEventState{Version: c.Version, Status: string(c.Status)})
			fmt.Fprintf(w, "event: state\ndata: %s\n\n", data)
		}
		return nil
	})
	return nil
}

func writeFeedEvent(w io.Writer, it arena.FeedItem) {
	data, _ := json.Marshal(feedItem(it))
	fmt.Fprintf(w, "id: %d\nevent: feed\ndata: %s\n\n", it.Seq, data)
}
