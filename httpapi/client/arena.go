package client

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agorahq/agora/arena"
)

// CreateGame creates an arena game; a minPlayers that is not positive
// takes the server's default.
func (c *Client) CreateGame(ctx context.Context, minPlayers int) (string, error) {
	var out struct {
		GameID string `json:"game_id"`
	}
	in := map[string]any{}
	if minPlayers > 0 {
		in["min_players"] = minPlayers
	}
	err := c.do(ctx, "POST", "/api/games", in, &out)
	return out.GameID, err
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
}

// Game returns a game's metadata.
func (c *Client) Game(ctx context.Context, gameID string) (GameMeta, error) {
	var m GameMeta
	err := c.do(ctx, "GET", "/api/games/"+esc(gameID), nil, &m)
	return m, err
}

// Register registers an agent; a non-empty token then guards its actions
// (call them on c.As(token)).
func (c *Client) Register(ctx context.Context, gameID, name, token string) (string, error) {
	var out struct {
		AgentID string `json:"agent_id"`
	}
	in := map[string]any{"display_name": name}
	if token != "" {
		in["token"] = token
	}
	err := c.do(ctx, "POST", "/api/games/"+esc(gameID)+"/agents/register", in, &out)
	return out.AgentID, err
}

// StartGame starts a game.
func (c *Client) StartGame(ctx context.Context, gameID string) error {
	return c.do(ctx, "POST", "/api/games/"+esc(gameID)+"/start", nil, nil)
}

// ArenaState is the part of GET /api/games/{id}/state an agent acts on;
// Raw holds the whole payload (seats, board, scores, coverage, …).
type ArenaState struct {
	GameID             string          `json:"game_id"`
	Status             string          `json:"status"`
	CurrentRoundNumber int             `json:"current_round_number"`
	CurrentRoundID     *string         `json:"current_round_id"`
	CurrentPhase       *string         `json:"current_phase"`
	Version            int64           `json:"version"`
	Raw                json.RawMessage `json:"-"`
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

// Argue submits an argument.
func (c *Client) Argue(ctx context.Context, gameID, roundID, agentID, text string) error {
	return c.do(ctx, "POST", "/api/games/"+esc(gameID)+"/rounds/"+esc(roundID)+"/arguments", map[string]any{"agent_id": agentID, "text": text}, nil)
}

// Decide submits the operator's decision.
func (c *Client) Decide(ctx context.Context, gameID, roundID, agentID, decision string) error {
	return c.do(ctx, "POST", "/api/games/"+esc(gameID)+"/rounds/"+esc(roundID)+"/decision", map[string]any{"agent_id": agentID, "decision": decision}, nil)
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
