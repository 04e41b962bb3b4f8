package arena

import (
	"crypto/sha256"
	"maps"
	"slices"
	"time"

	"github.com/agorahq/agora/internal/ids"
	"github.com/agorahq/agora/internal/text"
	"github.com/agorahq/agora/store"
)

// env is what transitions need from the service.
type env struct {
	now time.Time
	ids *ids.Gen
}

// NewGame returns a game waiting for agents.
func NewGame(id string, minPlayers int, phaseTimeout time.Duration, now time.Time) (Game, error) {
	if minPlayers == 0 {
		minPlayers = DefaultMinPlayer
	}
	if minPlayers < 1 || minPlayers > MaxAgents {
		return Game{}, store.Errorf(store.ErrInvalid, "invalid_min_players", "min_players must be from 1 to %d", MaxAgents)
	}
	if phaseTimeout < 0 || phaseTimeout > 24*time.Hour {
		return Game{}, store.Errorf(store.ErrInvalid, "invalid_phase_timeout", "phase_timeout_s must be from 0 (off) to 86400")
	}
	return Game{
		ID: id, Status: StatusWaiting, MinPlayers: minPlayers, PhaseTimeout: phaseTimeout,
		Agents: []Agent{}, Scores: map[string]int{}, EndedRounds: []string{},
		Version: 1, CreatedAt: now,
	}, nil
}

// event appends an event to the feed and notes the time.
func (g *Game) event(e env, typ string, payload Payload) {
	payload.Type, payload.EventType = typ, typ
	it := FeedItem{ID: e.ids.New("evt"), Type: "event", Payload: &payload, CreatedAt: e.now}
	if r := g.Current(); r != nil {
		n, ph := r.Number, r.Phase
		it.RoundNumber, it.Phase = &n, &ph
	}
	g.appendFeed(it)
	now := e.now
	g.LastEventAt = &now
}

func (g *Game) started() bool { return g.Status != StatusWaiting && g.Status != StatusReady }

// register adds an agent while the game has not started.
func (g *Game) register(name string, by actor, e env) (Agent, error) {
	return g.join(name, by, false, e)
}

// join adds an agent, a filler or not, while the game has not started,
// bound to by's key or token when it has one.
func (g *Game) join(name string, by actor, filler bool, e env) (Agent, error) {
	if g.started() {
		return Agent{}, bad("Game already started")
	}
	name, err := text.Trimmed("display_name", name, true, MaxNameChars)
	if err != nil {
		return Agent{}, err
	}
	if len(g.Agents) >= MaxAgents {
		return Agent{}, bad("Game is full")
	}
	a := Agent{ID: e.ids.New("agent"), DisplayName: name, Filler: filler, KeyID: by.KeyID}
	if by.Token != "" {
		h := sha256.Sum256([]byte(by.Token))
		a.TokenHash = h[:]
	}
	g.Agents = append(g.Agents, a)
	g.Scores[a.ID] = 0
	if len(g.Agents) >= g.MinPlayers {
		g.Status = StatusReady
	}
	g.event(e, "agent_registered", Payload{AgentID: a.ID, DisplayName: a.DisplayName, Filler: filler})
	return a, nil
}

// start begins round one.
func (g *Game) start(e env) error {
	switch {
	case g.started():
		return bad("Game already started")
	case g.Status != StatusReady:
		return bad("Not enough agents to start")
	}
	g.event(e, "game_started", Payload{})
	g.startRound(e)
	return nil
}

// startRound assigns roles so that every agent plays every role in about as
// many rounds as there are agents. The operator is the first agent (in
// registration order) who has not been operator — once all have, the first
// whose coverage is complete, so the seat costs nobody a role still to
// play. The minority seat goes to the first other agent who has not been
// minority — once all have, to one who has been majority, so those who
// still need the majority track stay on it. Everyone else is majority.
func (g *Game) startRound(e env) {
	cov := g.Coverage()
	first := func(ok func(i int, c Coverage) bool) int {
		for i, c := range cov {
			if ok(i, c) {
				return i
			}
		}
		return -1
	}
	op := first(func(_ int, c Coverage) bool { return !c.HasBeenOperator })
	if op < 0 {
		op = max(0, first(func(_ int, c Coverage) bool { return c.Complete }))
	}
	min := first(func(i int, c Coverage) bool { return i != op && !c.HasBeenMinority })
	if min < 0 {
		min = first(func(i int, c Coverage) bool { return i != op && c.HasBeenMajority })
	}
	if min < 0 {
		min = (op + 1) % len(g.Agents)
	}
	r := Round{ID: e.ids.New("round"), Number: g.RoundCount + 1, Operator: g.Agents[op].ID, Minority: []string{g.Agents[min].ID},
		Majority: []string{}, Arguments: []Argument{}, StartedAt: e.now}
	for i := range g.Agents {
		a := &g.Agents[i]
		switch i {
		case op:
			a.BeenOperator = true
		case min:
			a.BeenMinority = true
		default:
			a.BeenMajority = true
			r.Majority = append(r.Majority, a.ID)
		}
	}
	if g.Round != nil {
		g.EndedRounds = append(g.EndedRounds, g.Round.ID)
	}
	g.Round, g.RoundCount = &r, g.RoundCount+1
	g.setPhase(Phase1, e)
	g.event(e, "round_started", Payload{RoundID: r.ID, Operator: r.Operator, Majority: r.Majority, Minority: r.Minority})
}

var phaseStatus = map[Phase]Status{
	Phase1: StatusPhase1, Phase2: StatusPhase2, Phase3: StatusPhase3,
	PhaseAwaiting: StatusAwaiting, PhaseResolved: StatusResolved,
}

func (g *Game) setPhase(p Phase, e env) {
	g.Current().Phase = p
	g.Status = phaseStatus[p]
	g.PhaseDeadline = nil
	if g.PhaseTimeout > 0 && p != PhaseResolved {
		d := e.now.Add(g.PhaseTimeout)
		g.PhaseDeadline = &d
	}
}

func debating(p Phase) bool { return p == Phase1 || p == Phase2 || p == Phase3 }

// round returns the round with ID id if it is the current one.
func (g *Game) round(id string) (*Round, error) {
	switch {
	case g.Round != nil && g.Round.ID == id:
		return g.Round, nil
	case slices.Contains(g.EndedRounds, id):
		return nil, bad("Round is over")
	}
	return nil, ErrRoundNotFound
}

// ArguedThisPhase lists the agents who argued in the current phase.
func (r *Round) ArguedThisPhase() []string {
	out := []string{}
	for _, a := range r.Arguments {
		if a.Phase == r.Phase {
			out = append(out, a.AgentID)
		}
	}
	return out
}

// Action is what an agent may do in the round being played.
type Action string

// The actions, as GET /open-actions names them.
const (
	ActArgue  Action = "argument"
	ActDecide Action = "decision"
)

// RoleOf returns agentID's seat in the round, or "" when it has none.
func (r *Round) RoleOf(agentID string) Role {
	switch {
	case r.Operator == agentID:
		return RoleOperator
	case slices.Contains(r.Majority, agentID):
		return RoleMajority
	case slices.Contains(r.Minority, agentID):
		return RoleMinority
	}
	return ""
}

// mayArgue decides whether agentID may argue now, and if not, why: the
// round must be in a debate phase of a game not over, the agent on a
// track, and without an argument in this phase. argue enforces it and
// Turn reports it, so both say the same.
func (g *Game) mayArgue(agentID string) error {
	r := g.Current()
	if r == nil || !debating(r.Phase) || g.Status == StatusCompleted {
		return bad("Not in a debate phase")
	}
	if role := r.RoleOf(agentID); role != RoleMajority && role != RoleMinority {
		return bad("Agent not in this round as majority/minority")
	}
	if slices.Contains(r.ArguedThisPhase(), agentID) {
		return bad("Already submitted argument this phase")
	}
	return nil
}

// mayDecide decides whether agentID may decide the round now, and if not,
// why: the round must await its decision and the agent be its operator.
// decide enforces it and Turn reports it.
func (g *Game) mayDecide(agentID string) error {
	r := g.Current()
	switch {
	case r == nil || r.Phase != PhaseAwaiting:
		return bad("Not in decision phase")
	case agentID != r.Operator:
		return bad("Only operator can submit decision")
	}
	return nil
}

// Turn is an agent's part in the round being played and what it may do
// now.
type Turn struct {
	// RoundID is the round being played, empty before the first round
	// and once the game is over (then Role and Allowed are empty too).
	RoundID string
	// Role is the agent's seat in the round, empty when it has none.
	Role Role
	// Allowed is what the agent may do now, empty when nothing.
	Allowed Action
}

// Turn returns agentID's part in the round being played and what it may
// do now, decided by the rules that argue and decide enforce: a track
// agent argues once per debate phase, the operator decides once the
// debate is over. An agent of no game is ErrAgentNotFound.
func (g *Game) Turn(agentID string) (Turn, error) {
	if g.agent(agentID) == nil {
		return Turn{}, ErrAgentNotFound
	}
	r := g.Current()
	if r == nil || g.Status == StatusCompleted {
		return Turn{}, nil
	}
	t := Turn{RoundID: r.ID, Role: r.RoleOf(agentID)}
	switch {
	case g.mayDecide(agentID) == nil:
		t.Allowed = ActDecide
	case g.mayArgue(agentID) == nil:
		t.Allowed = ActArgue
	}
	return t, nil
}

// argue records a track agent's argument; the last one of a phase moves the
// round on.
func (g *Game) argue(roundID, agentID, argument string, e env) error {
	r, err := g.round(roundID)
	if err != nil {
		return err
	}
	if err := g.mayArgue(agentID); err != nil {
		return err
	}
	argument, err = text.Trimmed("text", argument, true, MaxArgumentChars)
	if err != nil {
		return err
	}
	argID := e.ids.New("arg")
	r.Arguments = append(r.Arguments, Argument{ID: argID, AgentID: agentID, Phase: r.Phase, Text: argument, CreatedAt: e.now})
	a := g.agent(agentID)
	n, ph, id, name, t := r.Number, r.Phase, agentID, a.DisplayName, argument
	g.appendFeed(FeedItem{ID: argID, Type: "argument", RoundNumber: &n, Phase: &ph, AgentID: &id, DisplayName: &name, Text: &t, CreatedAt: e.now})
	now := e.now
	g.LastEventAt = &now
	if len(r.ArguedThisPhase()) == len(r.Majority)+len(r.Minority) {
		g.nextPhase(e)
	}
	return nil
}

// nextPhase moves a debating round to its next phase.
func (g *Game) nextPhase(e env) {
	next := map[Phase]Phase{Phase1: Phase2, Phase2: Phase3, Phase3: PhaseAwaiting}[g.Current().Phase]
	g.setPhase(next, e)
	g.event(e, "phase_changed", Payload{Phase: next})
}

// decide records the operator's decision.
func (g *Game) decide(roundID, agentID string, d Decision, e env) error {
	if _, err := g.round(roundID); err != nil {
		return err
	}
	if err := g.mayDecide(agentID); err != nil {
		return err
	}
	if d != SaveMajority && d != SaveMinority {
		return bad("Decision must be save_majority or save_minority")
	}
	g.resolve(d, false, e)
	return nil
}

// resolve applies a decision: survivors score, the round ends, and the next
// round starts unless every agent has played every role.
func (g *Game) resolve(d Decision, forced bool, e env) {
	r := g.Current()
	r.Decision, r.Forced = d, forced
	r.Survivors, r.Lost = slices.Clone(r.Majority), slices.Clone(r.Minority)
	if d == SaveMinority {
		r.Survivors, r.Lost = r.Lost, r.Survivors
	}
	for _, id := range r.Survivors {
		g.Scores[id]++
	}
	now := e.now
	r.EndedAt = &now
	g.setPhase(PhaseResolved, e)
	g.Appended.Rounds = append(g.Appended.Rounds, *r.clone())
	// The board needs the decision and its outcome only.
	g.LastResolved = &Round{ID: r.ID, Number: r.Number, Operator: r.Operator, Phase: r.Phase, Decision: d, Forced: forced,
		Survivors: slices.Clone(r.Survivors), Lost: slices.Clone(r.Lost), StartedAt: r.StartedAt, EndedAt: r.EndedAt}
	g.AnimationCount++
	g.event(e, "round_resolved", Payload{RoundID: r.ID, Decision: d, Forced: forced, Survivors: r.Survivors, Lost: r.Lost})
	for _, c := range g.Coverage() {
		if !c.Complete {
			g.startRound(e)
			return
		}
	}
	g.Status = StatusCompleted
	g.PhaseDeadline = nil
	g.event(e, "game_completed", Payload{Scores: maps.Clone(g.Scores)})
}

// AdvanceAction is an admin's push of a stuck game.
type AdvanceAction string

// The advance actions.
const (
	ActionNextPhase     AdvanceAction = "next_phase"
	ActionForceDecision AdvanceAction = "force_decision"
	// ActionResolveRound decides a round awaiting its operator's decision
	// (save_majority); at any other phase it is refused with "Not
	// awaiting decision".
	ActionResolveRound AdvanceAction = "resolve_round"
)

// advance applies an admin action.
func (g *Game) advance(a AdvanceAction, e env) error {
	r := g.Current()
	if r == nil || g.Status == StatusCompleted {
		return bad("Game is not in a round")
	}
	switch a {
	case ActionNextPhase:
		if !debating(r.Phase) {
			return bad("Not in a debate phase")
		}
		g.nextPhase(e)
	case ActionForceDecision:
		if !debating(r.Phase) {
			return bad("Not in a debate phase")
		}
		g.setPhase(PhaseAwaiting, e)
		g.event(e, "phase_changed", Payload{Phase: PhaseAwaiting, Forced: true})
	case ActionResolveRound:
		// As the original: only a round awaiting its operator's decision
		// is resolved by force (save_majority).
		if r.Phase != PhaseAwaiting {
			return bad("Not awaiting decision")
		}
		g.resolve(SaveMajority, true, e)
	default:
		return bad("Action must be next_phase, force_decision or resolve_round")
	}
	return nil
}

// sweep applies an overdue phase deadline as the timeouts rule says: a
// debate phase moves on as next_phase would; an overdue decision is forced
// and resolved. It reports whether anything changed.
func (g *Game) sweep(e env) bool {
	if g.PhaseDeadline == nil || e.now.Before(*g.PhaseDeadline) || g.Status == StatusCompleted || g.Current() == nil {
		return false
	}
	if debating(g.Current().Phase) {
		g.nextPhase(e)
	} else {
		g.resolve(SaveMajority, true, e)
	}
	return true
}
