package arena

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"maps"
	"slices"
	"time"

	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/store"
)

// Status is a game's state as the state payload reports it.
type Status string

// The game statuses of docs/arena.md.
const (
	StatusWaiting   Status = "waiting_for_agents"
	StatusReady     Status = "ready_to_start"
	StatusPhase1    Status = "round_phase_1"
	StatusPhase2    Status = "round_phase_2"
	StatusPhase3    Status = "round_phase_3"
	StatusAwaiting  Status = "awaiting_operator_decision"
	StatusResolved  Status = "round_resolved"
	StatusCompleted Status = "game_completed"
	// DefaultMinPlayer is a game's min_players when its creator gives
	// none: 1, as in the original, so that one agent can start a game
	// that fillers make up (see TableMin).
	DefaultMinPlayer = 1
	// TableMin is the fewest agents a round seats (an operator, a majority
	// and a minority): a game that starts with fewer registered agents is
	// made up to TableMin (or its min_players, if more) with fillers.
	TableMin = 3
)

// Valid reports whether s is one of the statuses above.
func (s Status) Valid() bool {
	switch s {
	case StatusWaiting, StatusReady, StatusPhase1, StatusPhase2, StatusPhase3, StatusAwaiting, StatusResolved, StatusCompleted:
		return true
	}
	return false
}

// Phase is where a round is.
type Phase string

// The round phases.
const (
	Phase1           Phase = "phase_1"
	Phase2           Phase = "phase_2"
	Phase3           Phase = "phase_3"
	PhaseAwaiting    Phase = "awaiting_decision"
	PhaseResolved    Phase = "resolved"
	MaxArgumentChars       = 500
	MaxNameChars           = 100
	MaxAgents              = 50
)

// Role is an agent's part in a round.
type Role string

// The roles.
const (
	RoleOperator Role = "operator"
	RoleMajority Role = "majority"
	RoleMinority Role = "minority"
)

// Decision is the operator's choice.
type Decision string

// The decisions.
const (
	SaveMajority Decision = "save_majority"
	SaveMinority Decision = "save_minority"
)

// Agent is a registered player. TokenHash is the SHA-256 of the token it
// registered with, if any.
type Agent struct {
	// ID is the service's ("agent_" and 24 hex digits), unique in the
	// game.
	ID string `json:"id"`
	// DisplayName is the name it registered with, trimmed, 1 to
	// MaxNameChars characters; fillers get one of the filler names.
	DisplayName string `json:"display_name"`
	// TokenHash is nil when the agent registered without a token; then
	// only its KeyID, if any, guards it.
	TokenHash []byte `json:"token_hash,omitempty"`
	// KeyID is the ID of the API key that registered the agent on a server
	// that requires keys (httpapi.WithKeys): only that key acts for it.
	KeyID string `json:"key_id,omitempty"`
	// Filler marks an agent Agora plays itself (see Service.AddFillers).
	Filler bool `json:"filler,omitempty"`
	// The roles the agent has been seated in, the current round's
	// included: its coverage. They are set when a round seats it and
	// never cleared.
	BeenOperator bool `json:"been_operator,omitempty"`
	BeenMajority bool `json:"been_majority,omitempty"` // seated on the majority track
	BeenMinority bool `json:"been_minority,omitempty"` // seated on the minority track
}

// Argument is one agent's argument in one phase of a round.
type Argument struct {
	// ID is the argument's feed item's ID (empty in games stored before
	// arguments had one).
	ID string `json:"id,omitempty"`
	// AgentID is the arguing agent, one on the round's majority or
	// minority track.
	AgentID string `json:"agent_id"`
	// Phase is the debate phase it was made in: Phase1, Phase2 or Phase3.
	Phase Phase `json:"phase"`
	// Text is the argument, trimmed, 1 to MaxArgumentChars characters.
	Text string `json:"text"`
	// CreatedAt is when the service recorded it, UTC to the millisecond.
	CreatedAt time.Time `json:"created_at"`
}

// Round is one trolley problem.
type Round struct {
	// ID is the service's, "round_" and 24 hex digits.
	ID string `json:"id"`
	// Number counts the game's rounds from 1.
	Number int `json:"number"`
	// Operator is the ID of the agent who decides the round, one of the
	// game's Agents.
	Operator string `json:"operator"`
	// Majority lists the IDs of the agents on the majority track: every
	// agent seated as neither operator nor minority.
	Majority []string `json:"majority"`
	// Minority lists the IDs of the agents on the minority track: one
	// agent, as rounds are seated.
	Minority []string `json:"minority"`
	// Phase is where the round is; PhaseResolved once it is decided.
	Phase Phase `json:"phase"`
	// Arguments are the round's arguments of every phase, in the order
	// they were made; nil in Game.LastResolved.
	Arguments []Argument `json:"arguments"`
	// Decision is the operator's (or a forced) choice, empty until the
	// round is decided.
	Decision Decision `json:"decision,omitempty"`
	// Forced marks a decision no operator made: an admin's resolve_round
	// or an overdue decision's timeout, both SaveMajority.
	Forced bool `json:"forced,omitempty"`
	// Survivors lists the IDs of the saved track's agents, each of whom
	// scored a point; empty until the round is decided.
	Survivors []string `json:"survivors,omitempty"`
	// Lost lists the IDs of the other track's agents; empty until the
	// round is decided.
	Lost []string `json:"lost,omitempty"`
	// StartedAt is when the round was seated, UTC to the millisecond.
	StartedAt time.Time `json:"started_at"`
	// EndedAt is when the round was decided; nil until then.
	EndedAt *time.Time `json:"ended_at,omitempty"`
}

// FeedItem is an argument or an event of a game's feed. Its JSON is its
// stored form — every backend keeps a game's feed as JSON items, and
// Change carries them to other processes — so the tags must not change;
// the HTTP edge shows items as wire.FeedItem.
type FeedItem struct {
	// ID is an argument's Argument.ID ("arg_…") or an event's own
	// ("evt_…").
	ID   string `json:"id"`
	Type string `json:"type"` // argument or event
	// RoundNumber is the Number of the round being played when the item
	// was appended; nil before the first round.
	RoundNumber *int `json:"round_number"`
	// Phase is that round's phase when the item was appended (for an
	// event, the phase the change left it in); nil before the first
	// round.
	Phase *Phase `json:"phase"`
	// AgentID is the arguing agent's ID; nil for an event.
	AgentID *string `json:"agent_id"`
	// DisplayName is the arguing agent's display name; nil for an event.
	DisplayName *string `json:"display_name"`
	// Text is the argument's text; nil for an event.
	Text *string `json:"text"`
	// Payload is an event's data; nil for an argument.
	Payload *Payload `json:"payload"`
	// CreatedAt is when the change that appended the item was made, UTC
	// to the millisecond.
	CreatedAt time.Time `json:"created_at"`
	// Seq numbers the game's feed items from 1 in the order they were
	// appended.
	Seq int64 `json:"seq"`
}

// Payload is the data of a feed event: Type says which event it is
// (agent_registered, game_started, round_started, phase_changed,
// round_resolved, game_completed), EventType repeats it under the name
// the original's page reads, and the other fields are that event's. Its
// JSON is part of FeedItem's stored form.
type Payload struct {
	Type      string `json:"type"`                 // the event, e.g. "round_started"
	EventType string `json:"event_type,omitempty"` // equal to Type
	// AgentID is the registered agent's ID (agent_registered).
	AgentID string `json:"agent_id,omitempty"`
	// DisplayName is the registered agent's name (agent_registered).
	DisplayName string `json:"display_name,omitempty"`
	// Filler marks a registered filler (agent_registered).
	Filler bool `json:"filler,omitempty"`
	// RoundID is the round started or resolved (round_started,
	// round_resolved).
	RoundID string `json:"round_id,omitempty"`
	// Operator is the new round's operator's ID (round_started).
	Operator string `json:"operator,omitempty"`
	// Majority lists the new round's majority track (round_started).
	Majority []string `json:"majority,omitempty"`
	// Minority lists the new round's minority track (round_started).
	Minority []string `json:"minority,omitempty"`
	// Phase is the phase entered (phase_changed).
	Phase Phase `json:"phase,omitempty"`
	// Decision is the round's decision (round_resolved).
	Decision Decision `json:"decision,omitempty"`
	// Forced marks an admin's force_decision (phase_changed) or a
	// decision no operator made (round_resolved), as Round.Forced.
	Forced bool `json:"forced,omitempty"`
	// Survivors lists the saved track's agents (round_resolved).
	Survivors []string `json:"survivors,omitempty"`
	// Lost lists the other track's agents (round_resolved).
	Lost []string `json:"lost,omitempty"`
	// Scores are the final scores by agent ID (game_completed).
	Scores map[string]int `json:"scores,omitempty"`
}

// LastArgument returns the last argument agentID made in round roundID,
// the current round or one this change resolved.
func (g *Game) LastArgument(roundID, agentID string) (Argument, bool) {
	rounds := g.Appended.Rounds
	if g.Round != nil {
		rounds = append(slices.Clip(rounds), *g.Round)
	}
	for _, r := range slices.Backward(rounds) {
		if r.ID != roundID {
			continue
		}
		for _, a := range slices.Backward(r.Arguments) {
			if a.AgentID == agentID {
				return a, true
			}
		}
	}
	return Argument{}, false
}

// Game is the aggregate: the document every change rewrites, of a size
// bounded by its agents and its current round, never by its length. What
// a game accumulates — its feed and its resolved rounds — is appended to
// logs beside it in the same atomic step as the change that made it
// (Appended), and never rewritten. Its JSON, with that of the types in it,
// is the document the backends store (see UnmarshalJSON), so the tags
// must not change; the HTTP edge shows games in its own wire shapes.
type Game struct {
	// ID is the service's, "game_" and 24 hex digits.
	ID string `json:"id"`
	// Status is the game's state; it follows the current round's phase
	// while one is played.
	Status Status `json:"status"`
	// MinPlayers is how many agents must register before the game is
	// StatusReady, 1 to MaxAgents; a start seats fillers up to it (and to
	// TableMin).
	MinPlayers   int           `json:"min_players"`
	PhaseTimeout time.Duration `json:"phase_timeout"` // 0: no deadline
	// PhaseDeadline is when the sweeper moves the current phase on
	// (PhaseTimeout after it began); nil without a PhaseTimeout and once
	// the game is over.
	PhaseDeadline *time.Time `json:"phase_deadline,omitempty"`
	// Agents are the registered agents in registration order, fillers
	// included, at most MaxAgents.
	Agents []Agent `json:"agents"`
	// Scores counts by agent ID the rounds each agent survived; every
	// agent has an entry, 0 from its registration.
	Scores map[string]int `json:"scores"`
	// Round is the round being played (the last one), nil before the
	// first.
	Round *Round `json:"round,omitempty"`
	// RoundCount counts the rounds started, the current one included.
	RoundCount int `json:"round_count"`
	// EndedRounds lists the IDs of the rounds before the current one.
	EndedRounds []string `json:"ended_rounds"`
	// LastResolved is the last round decided, without its tracks and
	// arguments (its survivors and lost only): what the board draws while
	// it is the round being played. Nil before the first decision.
	LastResolved *Round `json:"last_resolved,omitempty"`
	// FeedLen counts the game's feed items: the next one's Seq is
	// FeedLen+1.
	FeedLen int64 `json:"feed_len"`
	// AnimationCount counts the rounds decided; the board's
	// AnimationVersion.
	AnimationCount int `json:"animation_version"`
	// Version is 1 when the game is created and rises by exactly one with
	// every saved change; the store compares it to save.
	Version int64 `json:"version"`
	// CreatedAt is when the game was created, UTC to the millisecond.
	CreatedAt time.Time `json:"created_at"`
	// LastEventAt is when the last feed item was appended; nil while the
	// feed is empty.
	LastEventAt *time.Time `json:"last_event_at,omitempty"`
	// Appended is what the change being made adds to the game's logs; it
	// is not part of the document, and a game read from a store has none.
	Appended Appended `json:"-"`
}

// Appended is what one change adds to a game's logs: feed items (with
// their Seq) and resolved rounds (with their arguments), in order.
type Appended struct {
	Feed   []FeedItem // the items the change appended, Seq numbered
	Rounds []Round    // the rounds the change resolved, with their arguments
}

// bad is a 400 with one of the specification's messages.
func bad(msg string) error { return store.Errorf(store.ErrInvalid, "invalid_action", "%s", msg) }

// The errors of this package.
var (
	ErrGameNotFound  = &store.Error{Kind: store.ErrNotFound, Code: "game_not_found", Message: "Game not found"}
	ErrGameExists    = &store.Error{Kind: store.ErrConflict, Code: "game_exists", Message: "a game with this id exists"}
	ErrRoundNotFound = &store.Error{Kind: store.ErrNotFound, Code: "round_not_found", Message: "Round not found"}
	ErrAgentNotFound = &store.Error{Kind: store.ErrNotFound, Code: "agent_not_found", Message: "Agent not found in this game"}
	ErrBadToken      = &store.Error{Kind: store.ErrForbidden, Code: "invalid_token", Message: "this agent registered with a token: present it as Authorization: Bearer <token>"}
	ErrNotYourAgent  = &store.Error{Kind: store.ErrForbidden, Code: "not_your_agent", Message: "this agent is not registered by this API key: only the key that registered an agent acts for it"}
)

// actor is who registers or acts for an agent: the ID of the caller's API
// key when a key authenticated it (a server that requires keys), else the
// bearer token it presented (the original API's optional agent token).
type actor struct {
	Token string
	KeyID string
}

// actorOf is the actor of ctx's caller (identity.FromContext).
func actorOf(ctx context.Context) actor {
	c := identity.FromContext(ctx)
	if c.Keyed() {
		return actor{KeyID: c.Key.ID}
	}
	return actor{Token: c.Token}
}

// agent returns the registered agent with ID id, or nil.
func (g *Game) agent(id string) *Agent {
	for i := range g.Agents {
		if g.Agents[i].ID == id {
			return &g.Agents[i]
		}
	}
	return nil
}

// Current returns the round being played, or nil.
func (g *Game) Current() *Round { return g.Round }

// appendFeed numbers an item and appends it to the change's feed.
func (g *Game) appendFeed(it FeedItem) {
	g.FeedLen++
	it.Seq = g.FeedLen
	g.Appended.Feed = append(g.Appended.Feed, it)
}

// checkActor verifies that by may act for agentID. With a key, the agent
// must be one that key registered, whatever its token: an agent registered
// by another key, without one (a filler, a demo agent of no key) or
// before keys were required is not the key's. Without a key, an agent that
// registered with a token needs that token.
func (g *Game) checkActor(agentID string, by actor) error {
	a := g.agent(agentID)
	if a == nil {
		return nil // the action reports the unknown agent
	}
	if by.KeyID != "" {
		if a.KeyID != by.KeyID {
			return ErrNotYourAgent
		}
		return nil
	}
	if a.TokenHash == nil {
		return nil
	}
	h := sha256.Sum256([]byte(by.Token))
	if by.Token == "" || subtle.ConstantTimeCompare(h[:], a.TokenHash) != 1 {
		return ErrBadToken
	}
	return nil
}

// Coverage is one agent's record of roles played.
type Coverage struct {
	AgentID         string `json:"agent_id"`          // one of the game's Agents
	DisplayName     string `json:"display_name"`      // that agent's
	HasBeenOperator bool   `json:"has_been_operator"` // Agent.BeenOperator
	HasBeenMajority bool   `json:"has_been_majority"` // Agent.BeenMajority
	HasBeenMinority bool   `json:"has_been_minority"` // Agent.BeenMinority
	// Complete is set once the agent has played all three roles; the
	// game ends when every agent's is.
	Complete bool `json:"complete"`
}

// Coverage returns every agent's coverage in registration order.
func (g *Game) Coverage() []Coverage {
	out := make([]Coverage, 0, len(g.Agents))
	for _, a := range g.Agents {
		out = append(out, Coverage{AgentID: a.ID, DisplayName: a.DisplayName, HasBeenOperator: a.BeenOperator, HasBeenMajority: a.BeenMajority,
			HasBeenMinority: a.BeenMinority, Complete: a.BeenOperator && a.BeenMajority && a.BeenMinority})
	}
	return out
}

// Resolution says whether a board shows the outcome of the round being
// played or of an earlier one.
type Resolution string

// The resolutions, as the board's resolution_state names them.
const (
	ResolutionPending  Resolution = "pending"
	ResolutionResolved Resolution = "resolved"
)

// Board is the game as its board draws it: who argued in the phase being
// played, and the round being played's decision once it is decided — the
// branch the operator selected and who survived it. A round not decided
// yet shows no decision, not the previous round's: the Trolley Arena's
// page lights a track and greys out the lost from these fields.
type Board struct {
	// Argued lists the agents who argued in the current round's phase, in
	// the order they did; empty before the first round.
	Argued []string
	// Branch is the current round's decision, empty until it is decided.
	Branch Decision
	// Survivors and Lost are the current round's, empty until it is
	// decided.
	Survivors, Lost []string
	// Resolution is ResolutionResolved once the current round is decided,
	// else ResolutionPending.
	Resolution Resolution
	// AnimationVersion rises with every decision.
	AnimationVersion int
}

// Board returns the game as its board draws it.
func (g *Game) Board() Board {
	b := Board{Argued: []string{}, Survivors: []string{}, Lost: []string{}, Resolution: ResolutionPending, AnimationVersion: g.AnimationCount}
	if r := g.Current(); r != nil {
		b.Argued = r.ArguedThisPhase()
	}
	if r := g.LastResolved; r != nil && g.Round != nil && g.Round.ID == r.ID {
		b.Branch, b.Survivors, b.Lost = r.Decision, r.Survivors, r.Lost
		b.Resolution = ResolutionResolved
	}
	return b
}

// clone returns a deep copy of the round.
func (r *Round) clone() *Round {
	if r == nil {
		return nil
	}
	c := *r
	c.Majority, c.Minority = slices.Clone(r.Majority), slices.Clone(r.Minority)
	c.Survivors, c.Lost = slices.Clone(r.Survivors), slices.Clone(r.Lost)
	c.Arguments = slices.Clone(r.Arguments)
	return &c
}

// Clone returns a deep copy with nothing appended, so a failed transition
// leaves the original and a change starts with empty logs.
func (g Game) Clone() Game {
	g.Agents = slices.Clone(g.Agents)
	for i := range g.Agents {
		g.Agents[i].TokenHash = slices.Clone(g.Agents[i].TokenHash)
	}
	g.Round = g.Round.clone()
	// Ended round IDs and the last resolved round are never changed once
	// written: sharing them is safe.
	g.EndedRounds = slices.Clip(g.EndedRounds)
	g.Scores = maps.Clone(g.Scores)
	g.Appended = Appended{}
	return g
}

// UnmarshalJSON reads a game's document, including one stored before the
// feed and the resolved rounds moved out of it into logs: such a document
// carries "rounds" and "feed", and reads as the same game — its last round
// current, the others ended, its last decision on the board, its agents'
// coverage from the rounds they sat in, its feed counted in FeedLen (the
// items themselves are in the log where the store's migration copied
// them). Its next save writes the new shape.
func (g *Game) UnmarshalJSON(data []byte) error {
	type document Game
	var d struct {
		document
		Rounds []Round           `json:"rounds"`
		Feed   []json.RawMessage `json:"feed"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return err
	}
	*g = Game(d.document)
	if g.FeedLen == 0 {
		g.FeedLen = int64(len(d.Feed))
	}
	if len(d.Rounds) == 0 || g.RoundCount != 0 {
		return nil
	}
	for i := range d.Rounds {
		r := &d.Rounds[i]
		for j := range g.Agents {
			a := &g.Agents[j]
			a.BeenOperator = a.BeenOperator || r.Operator == a.ID
			a.BeenMajority = a.BeenMajority || slices.Contains(r.Majority, a.ID)
			a.BeenMinority = a.BeenMinority || slices.Contains(r.Minority, a.ID)
		}
		if r.Decision != "" {
			g.LastResolved = &Round{ID: r.ID, Number: r.Number, Operator: r.Operator, Phase: r.Phase, Decision: r.Decision, Forced: r.Forced,
				Survivors: r.Survivors, Lost: r.Lost, StartedAt: r.StartedAt, EndedAt: r.EndedAt}
		}
		if i < len(d.Rounds)-1 {
			g.EndedRounds = append(g.EndedRounds, r.ID)
		}
	}
	g.Round, g.RoundCount = &d.Rounds[len(d.Rounds)-1], len(d.Rounds)
	return nil
}
