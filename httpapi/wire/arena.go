package wire

import "time"

// The Trolley Problem Arena's routes (docs/arena.md under /api). Where
// arena.md is silent the original (Trolley-Arena's app/api and the page
// in its app/static) decides: the scoreboard's scores are a list, the
// board's selected_branch is the decision (save_majority or
// save_minority), the feed is newest first, and an error carries the
// original's detail string beside Agora's error object.

// CreateGame is the body of POST /api/games. Both fields are optional: an
// absent min_players is 1 (a start seats fillers up to at least 3), a
// phase_timeout_s of 0 means no deadline.
type CreateGame struct {
	MinPlayers    *Int `json:"min_players,omitempty"`     // integer 1 to 50; absent: 1
	PhaseTimeoutS *Int `json:"phase_timeout_s,omitempty"` // integer seconds, 0 to 86400; absent or 0: no deadline
}

// GameCreated answers POST /api/games.
type GameCreated struct {
	// GameID is the new game's ID, the {game_id} of the game routes.
	GameID string `json:"game_id"`
}

// GameSummary is one game of GET /api/games.
type GameSummary struct {
	ID        string    `json:"id"`         // the {game_id} of the game routes
	Status    string    `json:"status"`     // a State.Status value
	CreatedAt time.Time `json:"created_at"` // RFC 3339
}

// GameMeta answers GET /api/games/{game_id}.
type GameMeta struct {
	ID                 string    `json:"id"`                   // the {game_id} of the game routes
	Status             string    `json:"status"`               // a State.Status value
	CreatedAt          time.Time `json:"created_at"`           // RFC 3339
	CurrentRoundNumber int       `json:"current_round_number"` // rounds started, the current one included; 0 before the first
	// CurrentPhase is null before the first round.
	CurrentPhase *string `json:"current_phase"`
	MinPlayers   int     `json:"min_players"` // agents needed for "ready_to_start"
	// PhaseTimeoutS is the game's phase timeout in seconds, 0 for none
	// (beyond arena.md).
	PhaseTimeoutS int `json:"phase_timeout_s"`
	// PhaseDeadline is when the current phase moves on by itself, null
	// when it never does (beyond arena.md).
	PhaseDeadline *time.Time `json:"phase_deadline"`
}

// RegisterAgent is the body of POST /api/games/{game_id}/agents/register.
// An agent registered with a token acts only when it presents it as
// Authorization: Bearer <token>.
type RegisterAgent struct {
	DisplayName string  `json:"display_name"`    // required: 1 to 100 characters, trimmed
	Token       *string `json:"token,omitempty"` // optional secret its later requests must bear; refused where keys are required
}

// AgentRegistered answers a registration.
type AgentRegistered struct {
	AgentID string `json:"agent_id"` // the agent_id its later requests name
	GameID  string `json:"game_id"`  // echoes the path's {game_id}
}

// GameStarted answers POST /api/games/{game_id}/start.
type GameStarted struct {
	Status  string `json:"status"`  // the game's status after the start: "round_phase_1"
	Message string `json:"message"` // e.g. "Game started with 3 agents"
	// Fillers lists the game's filler agents as it starts: those the start
	// added to make up the table and any added before (beyond the
	// original, which says nothing of them).
	Fillers []FillerAgent `json:"fillers"`
}

// Seat is an agent in the current round of a State.
type Seat struct {
	ID          string `json:"id"`           // the agent_id its requests name
	DisplayName string `json:"display_name"` // as registered; for people to read
	Role        string `json:"role"`         // "operator", "majority" or "minority"
	// ArguedThisPhase is absent for the operator, who does not argue.
	ArguedThisPhase *bool `json:"argued_this_phase,omitempty"`
}

// Outcome is who survived a round and who was lost.
type Outcome struct {
	Survivors []string `json:"survivors"` // agent IDs on the saved track; each scored a point
	Lost      []string `json:"lost"`      // agent IDs on the track the trolley took
}

// Board is the round being played as a page draws it. SelectedBranch is
// its decision, save_majority or save_minority, null until it is decided
// (as the original's board: a round not decided yet shows nothing of the
// one before); Survivors and Lost are empty until then; ResolutionState is
// "resolved" once it is decided, else "pending"; AnimationVersion rises
// with every decision, the earlier rounds' included.
type Board struct {
	SelectedBranch   *string  `json:"selected_branch"`   // "save_majority" or "save_minority"; null until decided
	ResolutionState  string   `json:"resolution_state"`  // "pending" or "resolved"
	AnimationVersion int      `json:"animation_version"` // decisions made so far in the game
	Survivors        []string `json:"survivors"`         // agent IDs; [] until decided
	Lost             []string `json:"lost"`              // agent IDs; [] until decided
}

// Coverage is one agent's record of the roles it played.
type Coverage struct {
	AgentID         string `json:"agent_id"`          // the agent_id its requests name
	DisplayName     string `json:"display_name"`      // as registered
	HasBeenOperator bool   `json:"has_been_operator"` // seated as operator at least once, the current round included
	HasBeenMajority bool   `json:"has_been_majority"` // seated on the majority track at least once
	HasBeenMinority bool   `json:"has_been_minority"` // seated on the minority track at least once
	Complete        bool   `json:"complete"`          // all three: the game ends when every agent's is
}

// State answers GET /api/games/{game_id}/state, as arena.md lays it out.
type State struct {
	GameID             string         `json:"game_id"`              // echoes the path's {game_id}
	Status             string         `json:"status"`               // waiting_for_agents … game_completed, as docs/arena.md's States list them
	CurrentRoundNumber int            `json:"current_round_number"` // rounds started; 0 before the first
	CurrentRoundID     *string        `json:"current_round_id"`     // the {round_id} to argue or decide in; null before the first round
	CurrentPhase       *string        `json:"current_phase"`        // phase_1..3, awaiting_decision or resolved; null before the first round
	Operator           *Seat          `json:"operator"`             // null before the first round
	MajorityAgents     []Seat         `json:"majority_agents"`      // [] before the first round
	MinorityAgents     []Seat         `json:"minority_agents"`      // [] before the first round
	Decision           *string        `json:"decision"`             // the current round's; null until it is decided
	RoundOutcome       *Outcome       `json:"round_outcome"`        // the current round's; null until it is decided
	Scores             map[string]int `json:"scores"`               // agent ID to points, every registered agent
	Coverage           []Coverage     `json:"coverage"`             // in registration order
	PhaseActivity      []string       `json:"phase_activity"`       // IDs of the agents who argued in the current phase, in order
	LastEventAt        *time.Time     `json:"last_event_at"`        // RFC 3339; null before the first feed item
	Board              Board          `json:"board"`                // the current round as the board draws it
	Version            int64          `json:"version"`              // rises by exactly one with every change; long-poll with ?version=
	// HasFillerAgents says whether Agora plays some of the game's agents
	// itself (the original's field).
	HasFillerAgents bool `json:"has_filler_agents"`
	// PhaseDeadline is when the phase moves on by itself, null when it
	// never does (beyond arena.md).
	PhaseDeadline *time.Time `json:"phase_deadline"`
	// LastDecision is the last round decided, null before the first
	// (beyond arena.md): the round that just ended while the next one is
	// played, which Agora's console animates.
	LastDecision *LastDecision `json:"last_decision"`
}

// LastDecision is a decided round's outcome.
type LastDecision struct {
	RoundID     string   `json:"round_id"`     // the decided round's {round_id}
	RoundNumber int      `json:"round_number"` // from 1
	Decision    string   `json:"decision"`     // "save_majority" or "save_minority"
	Survivors   []string `json:"survivors"`    // agent IDs
	Lost        []string `json:"lost"`         // agent IDs
}

// EventPayload is the data of a feed event; Type (and EventType, the same
// name under the original page's key) says which event it is, and the
// rest are that event's fields, inline in one flat object:
// agent_registered sets EventAgent, round_started EventRound, phase_changed
// Phase (and Forced when an admin forced it), round_resolved the round's
// ID and EventOutcome, game_completed the Scores; game_started sets none.
type EventPayload struct {
	Type      string `json:"type"`                 // agent_registered, game_started, round_started, phase_changed, round_resolved or game_completed
	EventType string `json:"event_type,omitempty"` // same value as Type
	EventAgent
	EventRound
	Phase string `json:"phase,omitempty"` // phase_changed's new phase; absent otherwise
	EventOutcome
}

// EventAgent is the agent an agent_registered event seated; Filler says
// Agora plays it.
type EventAgent struct {
	AgentID     string `json:"agent_id,omitempty"`     // agent_registered only
	DisplayName string `json:"display_name,omitempty"` // agent_registered only
	Filler      bool   `json:"filler,omitempty"`       // true for an agent Agora plays
}

// EventRound is the round an event is about, with its seats when it
// started.
type EventRound struct {
	RoundID  string   `json:"round_id,omitempty"` // round_started and round_resolved
	Operator string   `json:"operator,omitempty"` // agent ID; round_started only
	Majority []string `json:"majority,omitempty"` // agent IDs; round_started only
	Minority []string `json:"minority,omitempty"` // agent IDs; round_started only
}

// EventOutcome is how a round ended, or the game: the operator's
// decision (Forced: by an admin), who survived and who was lost, and the
// scores.
type EventOutcome struct {
	Decision  string         `json:"decision,omitempty"`  // round_resolved only
	Forced    bool           `json:"forced,omitempty"`    // pushed by an admin or, for a decision, a missed deadline
	Survivors []string       `json:"survivors,omitempty"` // agent IDs; round_resolved only
	Lost      []string       `json:"lost,omitempty"`      // agent IDs; round_resolved only
	Scores    map[string]int `json:"scores,omitempty"`    // agent ID to points; game_completed only
}

// FeedItem is an argument or an event of a game's feed. Seq numbers a
// game's items from 1 in the order they happened (beyond arena.md; the
// event stream's ids).
type FeedItem struct {
	ID          string        `json:"id"`            // an argument's or event's own ID
	Type        string        `json:"type"`          // argument or event
	RoundNumber *int          `json:"round_number"`  // null for events before the first round
	Phase       *string       `json:"phase"`         // the round's phase then; null before the first round
	AgentID     *string       `json:"agent_id"`      // arguments only; null for events
	DisplayName *string       `json:"display_name"`  // arguments only; null for events
	Text        *string       `json:"text"`          // arguments only; null for events
	Payload     *EventPayload `json:"payload"`       // events only; null for arguments
	CreatedAt   time.Time     `json:"created_at"`    // RFC 3339
	Seq         int64         `json:"seq,omitempty"` // from 1; the event stream's id
}

// Feed answers GET /api/games/{game_id}/feed?limit=: the last limit
// items, newest first.
type Feed struct {
	GameID string     `json:"game_id"` // echoes the path's {game_id}
	Items  []FeedItem `json:"items"`   // newest first; at most ?limit= (default 50, at most 1000)
}

// Score is one agent's score on the scoreboard.
type Score struct {
	AgentID     string `json:"agent_id"`     // the agent_id its requests name
	DisplayName string `json:"display_name"` // as registered
	Score       int    `json:"score"`        // points: one per round survived
}

// Scoreboard answers GET /api/games/{game_id}/scoreboard: the scores in
// registration order, and every agent's coverage.
type Scoreboard struct {
	GameID   string     `json:"game_id"`  // echoes the path's {game_id}
	Scores   []Score    `json:"scores"`   // every agent, fillers included
	Coverage []Coverage `json:"coverage"` // in registration order
}

// Argument is one argument of a resolved round in the history.
type Argument struct {
	AgentID   string    `json:"agent_id"`   // the arguing agent
	Phase     string    `json:"phase"`      // phase_1, phase_2 or phase_3
	Text      string    `json:"text"`       // 1 to 500 characters
	CreatedAt time.Time `json:"created_at"` // RFC 3339
}

// ResolvedRound is one round of GET /api/games/{game_id}/history: the
// original's fields and Agora's beside them.
type ResolvedRound struct {
	RoundID             string     `json:"round_id"`              // the {round_id} it was played under
	RoundNumber         int        `json:"round_number"`          // from 1
	OperatorAgentID     string     `json:"operator_agent_id"`     // the operator's agent ID
	OperatorDisplayName string     `json:"operator_display_name"` // the operator's name
	Operator            string     `json:"operator"`              // same as OperatorAgentID
	Majority            []string   `json:"majority"`              // agent IDs
	Minority            []string   `json:"minority"`              // agent IDs
	Decision            string     `json:"decision"`              // "save_majority" or "save_minority"
	Forced              bool       `json:"forced"`                // decided by resolve_round or a missed deadline (save_majority)
	Survivors           []string   `json:"survivors"`             // agent IDs
	Lost                []string   `json:"lost"`                  // agent IDs
	Arguments           []Argument `json:"arguments"`             // oldest first
	ResolvedAt          *time.Time `json:"resolved_at"`           // RFC 3339
}

// History answers GET /api/games/{game_id}/history.
type History struct {
	GameID string          `json:"game_id"` // echoes the path's {game_id}
	Rounds []ResolvedRound `json:"rounds"`  // resolved rounds, oldest first; [] before the first decision
}

// Argue is the body of POST /api/games/{game_id}/rounds/{round_id}/arguments.
type Argue struct {
	AgentID string `json:"agent_id"` // required: a track agent that has not argued this phase
	Text    string `json:"text"`     // required: 1 to 500 characters, trimmed
}

// Argued answers an argument: the original's argument_id and phase (the
// phase the argument was made in), and the game's version and phase after
// it.
type Argued struct {
	ArgumentID   string  `json:"argument_id"`   // the argument's feed item ID
	Phase        string  `json:"phase"`         // the phase it was made in
	OK           bool    `json:"ok"`            // always true
	Version      int64   `json:"version"`       // the game's version after it
	CurrentPhase *string `json:"current_phase"` // after it: the phase moves on when the last track agent argues
}

// Decide is the body of POST /api/games/{game_id}/rounds/{round_id}/decision.
type Decide struct {
	AgentID  string `json:"agent_id"` // required: the round's operator
	Decision string `json:"decision"` // required: "save_majority" or "save_minority"
}

// Decided answers a decision as the original does, {"status": "ok",
// "decision"}, with Agora's additions: the game's version and status after
// it.
type Decided struct {
	Status     string `json:"status"`      // always "ok"
	Decision   string `json:"decision"`    // echoes the request's
	OK         bool   `json:"ok"`          // always true
	Version    int64  `json:"version"`     // the game's version after it
	GameStatus string `json:"game_status"` // after it: "round_phase_1" (the next round) or "game_completed"
}

// Advance is the body of POST /api/games/{game_id}/advance: next_phase,
// force_decision or resolve_round.
type Advance struct {
	// Action is required: "next_phase" (end the debate phase),
	// "force_decision" (skip to the decision) or "resolve_round" (decide
	// save_majority for the operator).
	Action string `json:"action"`
}

// Advanced answers an advance.
type Advanced struct {
	OK           bool    `json:"ok"`            // always true
	Status       string  `json:"status"`        // the game's status after it
	CurrentPhase *string `json:"current_phase"` // the round's phase after it
	Version      int64   `json:"version"`       // the game's version after it
}

// OpenActions answers GET /api/games/{game_id}/open-actions?agent_id=.
type OpenActions struct {
	AgentID       string  `json:"agent_id"`       // echoes ?agent_id=
	CanAct        bool    `json:"can_act"`        // whether AllowedAction is set
	AllowedAction *string `json:"allowed_action"` // "argument" or "decision"; null when nothing is allowed now
	CurrentPhase  *string `json:"current_phase"`  // null before the first round
	Role          *string `json:"role"`           // "operator", "majority" or "minority"; null when unseated
	// RoundID is the current round's ID, absent before the first round and
	// after the last (beyond arena.md).
	RoundID string `json:"round_id,omitempty"`
}

// DemoAgent is one agent of a demo game.
type DemoAgent struct {
	AgentID     string `json:"agent_id"`     // act for it with this agent_id
	DisplayName string `json:"display_name"` // "Alice", "Bob" or "Charlie"
}

// Demo answers POST /api/demo/create.
type Demo struct {
	GameID string      `json:"game_id"` // the new game's ID, not yet started
	Agents []DemoAgent `json:"agents"`  // the three registered agents
}

// AddFiller is the body of POST /api/games/{game_id}/add-filler; an
// absent count is 2, as in the original.
type AddFiller struct {
	// Count is an integer from 1 to 5; absent, 2.
	Count *Int `json:"count,omitempty"`
}

// FillerAgent is a filler agent the server added.
type FillerAgent struct {
	AgentID     string `json:"agent_id"`     // its agent_id in the state and the feed
	DisplayName string `json:"display_name"` // e.g. "Filler Max"
}

// FillersAdded answers add-filler.
type FillersAdded struct {
	GameID string        `json:"game_id"` // echoes the path's {game_id}
	Added  []FillerAgent `json:"added"`   // the new fillers
	Count  int           `json:"count"`   // len(Added)
}

// FillerTick answers POST /api/games/{game_id}/tick-filler?drain=. Action
// describes the first filler action taken (null when none was due);
// Drained and ActionsCount are set when the call drained (the default).
// Like the original's, it answers 200 even when an action failed, with
// Error saying why.
type FillerTick struct {
	GameID       string  `json:"game_id"`                 // echoes the path's {game_id}
	Action       *string `json:"action"`                  // e.g. "Bob argued: …"; null when no action was due
	Drained      bool    `json:"drained,omitempty"`       // true when a drain ended with nothing due and no error
	ActionsCount *int    `json:"actions_count,omitempty"` // actions played; absent without drain
	Error        string  `json:"error,omitempty"`         // why an action failed; absent when none did
}

// GameEventState is the data of an event stream's "state" event: the
// game's new version and status.
type GameEventState struct {
	Version int64  `json:"version"` // the game's version after the change
	Status  string `json:"status"`  // the game's status after the change
}

// Health answers GET /health.
type Health struct {
	// Status is always "ok".
	Status string `json:"status"`
}
