package client

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agorahq/agora/arena"
)

// NewGame is the body of POST /api/games. Zero fields are not sent and
// take the server's defaults.
type NewGame struct {
	// MinPlayers is how many agents must register before the game can
	// start; 0 means arena.DefaultMinPlayer. Fewer than that, or more than
	// arena.MaxAgents, is store.ErrInvalid.
	MinPlayers int
	// PhaseTimeout is how long each phase of a round may last before the
	// server moves it on (a debate phase as next_phase would, an overdue
	// decision forced); 0 means no deadline. It is sent as phase_timeout_s
	// in whole seconds, rounded away from zero so that a timeout under a
	// second is not taken for none; more than a day, or less than zero, is
	// store.ErrInvalid.
	PhaseTimeout time.Duration
}

// CreateGame creates an arena game and returns its ID.
func (c *Client) CreateGame(ctx context.Context, g NewGame) (string, error) {
	var out struct {
		GameID string `json:"game_id"`
	}
	in := map[string]any{}
	if g.MinPlayers != 0 {
		in["min_players"] = g.MinPlayers
	}
	if g.PhaseTimeout != 0 {
		in["phase_timeout_s"] = seconds(g.PhaseTimeout)
	}
	err := c.do(ctx, "POST", "/api/games", in, &out)
	return out.GameID, err
}

// seconds is d in whole seconds, rounded away from zero.
func seconds(d time.Duration) int64 {
	s := int64(d / time.Second)
	if d%time.Second > 0 {
		s++
	} else if d%time.Second < 0 {
		s--
	}
	return s
}

// Games lists games newest first, only those in status when it is set.
func (c *Client) Games(ctx context.Context, status arena.Status) ([]arena.Summary, error) {
	var out []arena.Summary
	err := c.do(ctx, "GET", "/api/games"+query("status", string(status)), nil, &out)
	return out, err
}

// GameMeta is a game's metadata, as GET /api/games/{id} answers it.
type GameMeta struct {
	ID                 string       `json:"id"`
	Status             arena.Status `json:"status"`
	CreatedAt          time.Time    `json:"created_at"`
	CurrentRoundNumber int          `json:"current_round_number"`
	// CurrentPhase is nil before the first round.
	CurrentPhase *arena.Phase `json:"current_phase"`
	MinPlayers   int          `json:"min_players"`
	// PhaseTimeoutS is the game's phase timeout in seconds, 0 for none.
	PhaseTimeoutS int `json:"phase_timeout_s"`
	// PhaseDeadline is when the current phase moves on by itself; nil
	// when it never does.
	PhaseDeadline *time.Time `json:"phase_deadline"`
}

// Game returns a game's metadata.
func (c *Client) Game(ctx context.Context, gameID string) (GameMeta, error) {
	var m GameMeta
	err := c.do(ctx, "GET", "/api/games/"+esc(gameID), nil, &m)
	return m, err
}

// NewAgent is the body of POST /api/games/{id}/agents/register.
type NewAgent struct {
	DisplayName string `json:"display_name"`
	// Token, when set, guards the agent's actions: call them on
	// c.As(Token). Empty is not sent: anyone may act as the agent.
	Token string `json:"token,omitempty"`
}

// Register registers an agent in a game and returns its ID.
func (c *Client) Register(ctx context.Context, gameID string, a NewAgent) (string, error) {
	var out struct {
		AgentID string `json:"agent_id"`
	}
	err := c.do(ctx, "POST", "/api/games/"+esc(gameID)+"/agents/register", a, &out)
	return out.AgentID, err
}

// StartGame starts a game.
func (c *Client) StartGame(ctx context.Context, gameID string) error {
	return c.do(ctx, "POST", "/api/games/"+esc(gameID)+"/start", nil, nil)
}

// ArenaState is the part of GET /api/games/{id}/state an agent acts on;
// Raw holds the whole payload (seats, board, scores, coverage, …).
type ArenaState struct {
	GameID             string           `json:"game_id"`
	Status             string           `json:"status"`
	CurrentRoundNumber int              `json:"current_round_number"`
	CurrentRoundID     *string          `json:"current_round_id"`
	CurrentPhase       *string          `json:"current_phase"`
	Operator           *Seat            `json:"operator"`
	MajorityAgents     []Seat           `json:"majority_agents"`
	MinorityAgents     []Seat           `json:"minority_agents"`
	Scores             map[string]int   `json:"scores"`
	Coverage           []arena.Coverage `json:"coverage"`
	Board              Board            `json:"board"`
	Version            int64            `json:"version"`
	Raw                json.RawMessage  `json:"-"` // the whole state, every field of arena.md
}

// Seat is an agent in the current round of an ArenaState.
type Seat struct {
	ID              string `json:"id"`
	DisplayName     string `json:"display_name"`
	Role            string `json:"role"`
	ArguedThisPhase *bool  `json:"argued_this_phase,omitempty"`
}

// Board is the last resolved round as an ArenaState draws it: the branch
// the trolley took (the lost track), who survived and who was lost, and a
// version that rises with every decision.
type Board struct {
	SelectedBranch   *string  `json:"selected_branch"`
	ResolutionState  string   `json:"resolution_state"`
	AnimationVersion int      `json:"animation_version"`
	Survivors        []string `json:"survivors"`
	Lost             []string `json:"lost"`
}

// WaitState long-polls the game until its version is not version (or wait
// passes, or ctx ends) and returns its state; a version of -1 answers at
// once.
func (c *Client) WaitState(ctx context.Context, gameID string, version int64, wait time.Duration) (ArenaState, error) {
	var raw json.RawMessage
	err := c.do(ctx, "GET", fmt.Sprintf("/api/games/%s/state?version=%d&wait=%d", esc(gameID), version, int(wait/time.Second)), nil, &raw)
	if err != nil {
		return ArenaState{}, err
	}
	var s ArenaState
	err = json.Unmarshal(raw, &s)
	s.Raw = raw
	return s, err
}

// OpenAction says what an agent may do now.
type OpenAction struct {
	CanAct        bool    `json:"can_act"`
	AllowedAction *string `json:"allowed_action"`
	RoundID       string  `json:"round_id"`
	Role          *string `json:"role"`
}

// OpenActions asks what agentID may do.
func (c *Client) OpenActions(ctx context.Context, gameID, agentID string) (OpenAction, error) {
	var a OpenAction
	err := c.do(ctx, "GET", "/api/games/"+esc(gameID)+"/open-actions"+query("agent_id", agentID), nil, &a)
	return a, err
}

// Turn names who acts in which round of which game, for Argue and Decide:
// the game and round are the route's path, the agent its agent_id. An
// agent registered with a token acts on c.As(token).
type Turn struct {
	GameID  string
	RoundID string // OpenAction.RoundID or ArenaState.CurrentRoundID
	AgentID string
}

// path is the route of the turn's round.
func (t Turn) path() string {
	return "/api/games/" + esc(t.GameID) + "/rounds/" + esc(t.RoundID)
}

// Argue submits the turn's agent's argument, 1 to arena.MaxArgumentChars
// characters, in a debate phase.
func (c *Client) Argue(ctx context.Context, t Turn, text string) error {
	return c.do(ctx, "POST", t.path()+"/arguments", map[string]any{"agent_id": t.AgentID, "text": text}, nil)
}

// Decide submits the decision of the turn's agent, the round's operator,
// once the round awaits it.
func (c *Client) Decide(ctx context.Context, t Turn, d arena.Decision) error {
	return c.do(ctx, "POST", t.path()+"/decision", map[string]any{"agent_id": t.AgentID, "decision": d}, nil)
}

// Advanced is where a game stands after Advance.
type Advanced struct {
	Status       arena.Status `json:"status"`
	CurrentPhase *arena.Phase `json:"current_phase"`
	Version      int64        `json:"version"`
}

// Advance pushes a stuck game on as an admin: arena.ActionNextPhase ends
// the debate phase, arena.ActionForceDecision moves to the operator's
// decision, arena.ActionResolveRound resolves the round. An action the
// game's state does not allow is store.ErrInvalid.
func (c *Client) Advance(ctx context.Context, gameID string, action arena.AdvanceAction) (Advanced, error) {
	var a Advanced
	err := c.do(ctx, "POST", "/api/games/"+esc(gameID)+"/advance", map[string]any{"action": action}, &a)
	return a, err
}

// Feed returns the last limit items of a game's feed (arguments and
// events) in order; limit 0 means the server's default of 50.
func (c *Client) Feed(ctx context.Context, gameID string, limit int) ([]arena.FeedItem, error) {
	var out struct{ Items []arena.FeedItem }
	err := c.do(ctx, "GET", "/api/games/"+esc(gameID)+"/feed"+query("limit", num(limit)), nil, &out)
	return out.Items, err
}

// Scoreboard is a game's scores by agent ID and every agent's coverage of
// the three roles.
type Scoreboard struct {
	GameID   string           `json:"game_id"`
	Scores   map[string]int   `json:"scores"`
	Coverage []arena.Coverage `json:"coverage"`
}

// Scoreboard returns a game's scoreboard.
func (c *Client) Scoreboard(ctx context.Context, gameID string) (Scoreboard, error) {
	var s Scoreboard
	err := c.do(ctx, "GET", "/api/games/"+esc(gameID)+"/scoreboard", nil, &s)
	return s, err
}

// ResolvedRound is one round of GET /api/games/{id}/history.
type ResolvedRound struct {
	RoundID     string           `json:"round_id"`
	RoundNumber int              `json:"round_number"`
	Operator    string           `json:"operator"`
	Majority    []string         `json:"majority"`
	Minority    []string         `json:"minority"`
	Decision    arena.Decision   `json:"decision"`
	Forced      bool             `json:"forced"`
	Survivors   []string         `json:"survivors"`
	Lost        []string         `json:"lost"`
	Arguments   []arena.Argument `json:"arguments"`
	ResolvedAt  *time.Time       `json:"resolved_at"`
}

// History returns a game's resolved rounds in order.
func (c *Client) History(ctx context.Context, gameID string) ([]ResolvedRound, error) {
	var out struct{ Rounds []ResolvedRound }
	err := c.do(ctx, "GET", "/api/games/"+esc(gameID)+"/history", nil, &out)
	return out.Rounds, err
}

// DemoAgent is one agent of a demo game.
type DemoAgent struct {
	AgentID     string `json:"agent_id"`
	DisplayName string `json:"display_name"`
}

// CreateDemo creates a game with Alice, Bob and Charlie registered, and
// returns its ID and the agents.
func (c *Client) CreateDemo(ctx context.Context) (string, []DemoAgent, error) {
	var out struct {
		GameID string      `json:"game_id"`
		Agents []DemoAgent `json:"agents"`
	}
	err := c.do(ctx, "POST", "/api/demo/create", nil, &out)
	return out.GameID, out.Agents, err
}
