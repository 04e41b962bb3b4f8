package wire

import "time"

// The Trolley Problem Arena's routes (docs/arena.md under /api). Where
// arena.md is silent the original (Trolley-Arena's app/api and the page
// in its app/static) decides: the scoreboard's scores are a list, the
// board's selected_branch is the decision (save_majority or
// save_minority), the feed is newest first, and an error carries the
// original's detail string beside Agora's error object.

// CreateGame is the body of POST /api/games. Both fields are optional: an
// absent min_players is 3, a phase_timeout_s of 0 means no deadline.
type CreateGame struct {
	MinPlayers    *Int `json:"min_players,omitempty"`
	PhaseTimeoutS *Int `json:"phase_timeout_s,omitempty"`
}

// GameCreated answers POST /api/games.
type GameCreated struct {
	GameID string `json:"game_id"`
}

// GameSummary is one game of GET /api/games.
type GameSummary struct {
	ID        string    `json:"id"`
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"created_at"`
}

// GameMeta answers GET /api/games/{game_id}.
type GameMeta struct {
	ID                 string    `json:"id"`
	Status             string    `json:"status"`
	CreatedAt          time.Time `json:"created_at"`
	CurrentRoundNumber int       `json:"current_round_number"`
	// CurrentPhase is null before the first round.
	CurrentPhase *string `json:"current_phase"`
	MinPlayers   int     `json:"min_players"`
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
	DisplayName string  `json:"display_name"`
	Token       *string `json:"token,omitempty"`
}

// AgentRegistered answers a registration.
type AgentRegistered struct {
	AgentID string `json:"agent_id"`
	GameID  string `json:"game_id"`
}

// GameStarted answers POST /api/games/{game_id}/start.
type GameStarted struct {
	Status  string `json:"status"`
	Message string `json:"message"`
	// Fillers lists the filler agents the start added to make up the
	// table (beyond the original, which says nothing of them).
	Fillers []FillerAgent `json:"fillers"`
}

// Seat is an agent in the current round of a State.
type Seat struct {
	ID          string `json:"id"`
	DisplayName string `json:"display_name"`
	Role        string `json:"role"`
	// ArguedThisPhase is absent for the operator, who does not argue.
	ArguedThisPhase *bool `json:"argued_this_phase,omitempty"`
}

// Outcome is who survived a round and who was lost.
type Outcome struct {
	Survivors []string `json:"survivors"`
	Lost      []string `json:"lost"`
}

// Board is the round being played as a page draws it. SelectedBranch is
// its decision, save_majority or save_minority, null until it is decided
// (as the original's board: a round not decided yet shows nothing of the
// one before); Survivors and Lost are empty until then; ResolutionState is
// "resolved" once it is decided, else "pending"; AnimationVersion rises
// with every decision, the earlier rounds' included.
type Board struct {
	SelectedBranch   *string  `json:"selected_branch"`
	ResolutionState  string   `json:"resolution_state"`
	AnimationVersion int      `json:"animation_version"`
	Survivors        []string `json:"survivors"`
	Lost             []string `json:"lost"`
}

// Coverage is one agent's record of the roles it played.
type Coverage struct {
	AgentID         string `json:"agent_id"`
	DisplayName     string `json:"display_name"`
	HasBeenOperator bool   `json:"has_been_operator"`
	HasBeenMajority bool   `json:"has_been_majority"`
	HasBeenMinority bool   `json:"has_been_minority"`
	Complete        bool   `json:"complete"`
}

// State answers GET /api/games/{game_id}/state, as arena.md lays it out.
type State struct {
	GameID             string         `json:"game_id"`
	Status             string         `json:"status"`
	CurrentRoundNumber int            `json:"current_round_number"`
	CurrentRoundID     *string        `json:"current_round_id"`
	CurrentPhase       *string        `json:"current_phase"`
	Operator           *Seat          `json:"operator"`
	MajorityAgents     []Seat         `json:"majority_agents"`
	MinorityAgents     []Seat         `json:"minority_agents"`
	Decision           *string        `json:"decision"`
	RoundOutcome       *Outcome       `json:"round_outcome"`
	Scores             map[string]int `json:"scores"`
	Coverage           []Coverage     `json:"coverage"`
	PhaseActivity      []string       `json:"phase_activity"`
	LastEventAt        *time.Time     `json:"last_event_at"`
	Board              Board          `json:"board"`
	Version            int64          `json:"version"`
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
	RoundID     string   `json:"round_id"`
	RoundNumber int      `json:"round_number"`
	Decision    string   `json:"decision"`
	Survivors   []string `json:"survivors"`
	Lost        []string `json:"lost"`
}

// EventPayload is the data of a feed event; Type (and EventType, the same
// name under the original page's key) says which event it is, and the
// rest are that event's fields, inline in one flat object:
// agent_registered sets EventAgent, round_started EventRound, phase_changed
// Phase (and Forced when an admin forced it), round_resolved the round's
// ID and EventOutcome, game_completed the Scores; game_started sets none.
type EventPayload struct {
	Type      string `json:"type"`
	EventType string `json:"event_type,omitempty"`
	EventAgent
	EventRound
	Phase string `json:"phase,omitempty"`
	EventOutcome
}

// EventAgent is the agent an agent_registered event seated; Filler says
// Agora plays it.
type EventAgent struct {
	AgentID     string `json:"agent_id,omitempty"`
	DisplayName string `json:"display_name,omitempty"`
	Filler      bool   `json:"filler,omitempty"`
}

// EventRound is the round an event is about, with its seats when it
// started.
type EventRound struct {
	RoundID  string   `json:"round_id,omitempty"`
	Operator string   `json:"operator,omitempty"`
	Majority []string `json:"majority,omitempty"`
	Minority []string `json:"minority,omitempty"`
}

// EventOutcome is how a round ended, or the game: the operator's
// decision (Forced: by an admin), who survived and who was lost, and the
// scores.
type EventOutcome struct {
	Decision  string         `json:"decision,omitempty"`
	Forced    bool           `json:"forced,omitempty"`
	Survivors []string       `json:"survivors,omitempty"`
	Lost      []string       `json:"lost,omitempty"`
	Scores    map[string]int `json:"scores,omitempty"`
}

// FeedItem is an argument or an event of a game's feed. Seq numbers a
// game's items from 1 in the order they happened (beyond arena.md; the
// event stream's ids).
type FeedItem struct {
	ID          string        `json:"id"`
	Type        string        `json:"type"` // argument or event
	RoundNumber *int          `json:"round_number"`
	Phase       *string       `json:"phase"`
	AgentID     *string       `json:"agent_id"`
	DisplayName *string       `json:"display_name"`
	Text        *string       `json:"text"`
	Payload     *EventPayload `json:"payload"`
	CreatedAt   time.Time     `json:"created_at"`
	Seq         int64         `json:"seq,omitempty"`
}

// Feed answers GET /api/games/{game_id}/feed?limit=: the last limit
// items, newest first.
type Feed struct {
	GameID string     `json:"game_id"`
	Items  []FeedItem `json:"items"`
}

// Score is one agent's score on the scoreboard.
type Score struct {
	AgentID     string `json:"agent_id"`
	DisplayName string `json:"display_name"`
	Score       int    `json:"score"`
}

// Scoreboard answers GET /api/games/{game_id}/scoreboard: the scores in
// registration order, and every agent's coverage.
type Scoreboard struct {
	GameID   string     `json:"game_id"`
	Scores   []Score    `json:"scores"`
	Coverage []Coverage `json:"coverage"`
}

// Argument is one argument of a resolved round in the history.
type Argument struct {
	AgentID   string    `json:"agent_id"`
	Phase     string    `json:"phase"`
	Text      string    `json:"text"`
	CreatedAt time.Time `json:"created_at"`
}

// ResolvedRound is one round of GET /api/games/{game_id}/history: the
// original's fields and Agora's beside them.
type ResolvedRound struct {
	RoundID             string     `json:"round_id"`
	RoundNumber         int        `json:"round_number"`
	OperatorAgentID     string     `json:"operator_agent_id"`
	OperatorDisplayName string     `json:"operator_display_name"`
	Operator            string     `json:"operator"`
	Majority            []string   `json:"majority"`
	Minority            []string   `json:"minority"`
	Decision            string     `json:"decision"`
	Forced              bool       `json:"forced"`
	Survivors           []string   `json:"survivors"`
	Lost                []string   `json:"lost"`
	Arguments           []Argument `json:"arguments"`
	ResolvedAt          *time.Time `json:"resolved_at"`
}

// History answers GET /api/games/{game_id}/history.
type History struct {
	GameID string          `json:"game_id"`
	Rounds []ResolvedRound `json:"rounds"`
}

// Argue is the body of POST /api/games/{game_id}/rounds/{round_id}/arguments.
type Argue struct {
	AgentID string `json:"agent_id"`
	Text    string `json:"text"`
}

// Argued answers an argument: the original's argument_id and phase (the
// phase the argument was made in), and the game's version and phase after
// it.
type Argued struct {
	ArgumentID   string  `json:"argument_id"`
	Phase        string  `json:"phase"`
	OK           bool    `json:"ok"`
	Version      int64   `json:"version"`
	CurrentPhase *string `json:"current_phase"`
}

// Decide is the body of POST /api/games/{game_id}/rounds/{round_id}/decision.
type Decide struct {
	AgentID  string `json:"agent_id"`
	Decision string `json:"decision"`
}

// Decided answers a decision as the original does, {"status": "ok",
// "decision"}, with Agora's additions: the game's version and status after
// it.
type Decided struct {
	Status     string `json:"status"` // always "ok"
	Decision   string `json:"decision"`
	OK         bool   `json:"ok"`
	Version    int64  `json:"version"`
	GameStatus string `json:"game_status"`
}

// Advance is the body of POST /api/games/{game_id}/advance: next_phase,
// force_decision or resolve_round.
type Advance struct {
	Action string `json:"action"`
}

// Advanced answers an advance.
type Advanced struct {
	OK           bool    `json:"ok"`
	Status       string  `json:"status"`
	CurrentPhase *string `json:"current_phase"`
	Version      int64   `json:"version"`
}

// OpenActions answers GET /api/games/{game_id}/open-actions?agent_id=.
type OpenActions struct {
	AgentID       string  `json:"agent_id"`
	CanAct        bool    `json:"can_act"`
	AllowedAction *string `json:"allowed_action"`
	CurrentPhase  *string `json:"current_phase"`
	Role          *string `json:"role"`
	// RoundID is the current round's ID, absent before the first round and
	// after the last (beyond arena.md).
	RoundID string `json:"round_id,omitempty"`
}

// DemoAgent is one agent of a demo game.
type DemoAgent struct {
	AgentID     string `json:"agent_id"`
	DisplayName string `json:"display_name"`
}

// Demo answers POST /api/demo/create.
type Demo struct {
	GameID string      `json:"game_id"`
	Agents []DemoAgent `json:"agents"`
}

// AddFiller is the body of POST /api/games/{game_id}/add-filler; an
// absent count is 2, as in the original.
type AddFiller struct {
	Count *Int `json:"count,omitempty"`
}

// FillerAgent is a filler agent the server added.
type FillerAgent struct {
	AgentID     string `json:"agent_id"`
	DisplayName string `json:"display_name"`
}

// FillersAdded answers add-filler.
type FillersAdded struct {
	GameID string        `json:"game_id"`
	Added  []FillerAgent `json:"added"`
	Count  int           `json:"count"`
}

// FillerTick answers POST /api/games/{game_id}/tick-filler?drain=. Action
// describes the first filler action taken (null when none was due);
// Drained and ActionsCount are set when the call drained (the default).
// Like the original's, it answers 200 even when an action failed, with
// Error saying why.
type FillerTick struct {
	GameID       string  `json:"game_id"`
	Action       *string `json:"action"`
	Drained      bool    `json:"drained,omitempty"`
	ActionsCount *int    `json:"actions_count,omitempty"`
	Error        string  `json:"error,omitempty"`
}

// GameEventState is the data of an event stream's "state" event: the
// game's new version and status.
type GameEventState struct {
	Version int64  `json:"version"`
	Status  string `json:"status"`
}

// Health answers GET /health.
type Health struct {
	Status string `json:"status"`
}
