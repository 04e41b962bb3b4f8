package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/httpapi/wire"
)

// NewGame is the body of POST /api/games. Zero fields are not sent and
// take the server's defaults.
type NewGame struct {
	// MinPlayers is how many agents must register before the game can
	// start; 0 means arena.DefaultMinPlayer (1). More than arena.MaxAgents
	// is store.ErrInvalid. A game that starts with fewer than
	// arena.TableMin agents is made up with fillers.
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
	var out wire.GameCreated
	var in wire.CreateGame
	if g.MinPlayers != 0 {
		in.MinPlayers = wire.IntOf(g.MinPlayers)
	}
	if g.PhaseTimeout != 0 {
		in.PhaseTimeoutS = wire.IntOf(int(seconds(g.PhaseTimeout)))
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
func (c *Client) Games(ctx context.Context, status arena.Status) ([]wire.GameSummary, error) {
	var out []wire.GameSummary
	err := c.do(ctx, "GET", "/api/games"+query("status", string(status)), nil, &out)
	return out, err
}

// GameMeta is a game's metadata, as GET /api/games/{id} answers it.
type GameMeta = wire.GameMeta

// Game returns a game's metadata.
func (c *Client) Game(ctx context.Context, gameID string) (GameMeta, error) {
	var m GameMeta
	err := c.do(ctx, "GET", "/api/games/"+esc(gameID), nil, &m)
	return m, err
}

// NewAgent is the body of POST /api/games/{id}/agents/register.
type NewAgent struct {
	DisplayName string // required: 1 to arena.MaxNameChars characters
	// Token, when set, guards the agent's actions: call them on
	// c.As(Token). Empty is not sent: anyone may act as the agent. On a
	// server that requires API keys leave it empty: the agent is the key
	// that registers it, and only that key's client acts for it.
	Token string
}

// Register registers an agent in a game and returns its ID.
func (c *Client) Register(ctx context.Context, gameID string, a NewAgent) (string, error) {
	var out wire.AgentRegistered
	in := wire.RegisterAgent{DisplayName: a.DisplayName}
	if a.Token != "" {
		in.Token = &a.Token
	}
	err := c.do(ctx, "POST", "/api/games/"+esc(gameID)+"/agents/register", in, &out)
	return out.AgentID, err
}

// StartGame starts a game.
func (c *Client) StartGame(ctx context.Context, gameID string) error {
	return c.do(ctx, "POST", "/api/games/"+esc(gameID)+"/start", nil, nil)
}

// ArenaState is GET /api/games/{id}/state as typed fields; Raw holds the
// payload as it came.
type ArenaState struct {
	wire.State
	Raw json.RawMessage `json:"-"` // the whole state, every field of arena.md
}

// Seat is an agent in the current round of an ArenaState.
type Seat = wire.Seat

// Board is the round being played as an ArenaState draws it: its
// decision (save_majority or save_minority) and who survived and who was
// lost once it is decided, and a version that rises with every decision.
// The last round decided is the state's LastDecision.
type Board = wire.Board

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
	err = json.Unmarshal(raw, &s.State)
	s.Raw = raw
	return s, err
}

// OpenAction says what an agent may do now.
type OpenAction = wire.OpenActions

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
	GameID  string // the {game_id} of the route
	RoundID string // OpenAction.RoundID or ArenaState.CurrentRoundID
	AgentID string // sent as agent_id: the agent that argues or decides
}

// path is the route of the turn's round.
func (t Turn) path() string {
	return "/api/games/" + esc(t.GameID) + "/rounds/" + esc(t.RoundID)
}

// Argue submits the turn's agent's argument, 1 to arena.MaxArgumentChars
// characters, in a debate phase.
func (c *Client) Argue(ctx context.Context, t Turn, text string) error {
	_, err := c.ArgueTurn(ctx, t, text)
	return err
}

// ArgueTurn is Argue answering what the server answers: the argument's ID
// and phase, and the game's version and phase after it.
func (c *Client) ArgueTurn(ctx context.Context, t Turn, text string) (wire.Argued, error) {
	var out wire.Argued
	err := c.do(ctx, "POST", t.path()+"/arguments", wire.Argue{AgentID: t.AgentID, Text: text}, &out)
	return out, err
}

// Decide submits the decision of the turn's agent, the round's operator,
// once the round awaits it.
func (c *Client) Decide(ctx context.Context, t Turn, d arena.Decision) error {
	return c.do(ctx, "POST", t.path()+"/decision", wire.Decide{AgentID: t.AgentID, Decision: string(d)}, nil)
}

// Advanced is where a game stands after Advance.
type Advanced = wire.Advanced

// Advance pushes a stuck game on as an admin: arena.ActionNextPhase ends
// the debate phase, arena.ActionForceDecision moves to the operator's
// decision, arena.ActionResolveRound resolves a round awaiting that
// decision (save_majority). An action the
// game's state does not allow is store.ErrInvalid.
func (c *Client) Advance(ctx context.Context, gameID string, action arena.AdvanceAction) (Advanced, error) {
	var a Advanced
	err := c.do(ctx, "POST", "/api/games/"+esc(gameID)+"/advance", wire.Advance{Action: string(action)}, &a)
	return a, err
}

// Feed returns the last limit items of a game's feed (arguments and
// events), newest first; limit 0 means the server's default of 50.
func (c *Client) Feed(ctx context.Context, gameID string, limit int) ([]wire.FeedItem, error) {
	var out wire.Feed
	err := c.do(ctx, "GET", "/api/games/"+esc(gameID)+"/feed"+query("limit", num(limit)), nil, &out)
	return out.Items, err
}

// Scoreboard is a game's scores, one per agent in registration order, and
// every agent's coverage of the three roles.
type Scoreboard = wire.Scoreboard

// Scoreboard returns a game's scoreboard.
func (c *Client) Scoreboard(ctx context.Context, gameID string) (Scoreboard, error) {
	var s Scoreboard
	err := c.do(ctx, "GET", "/api/games/"+esc(gameID)+"/scoreboard", nil, &s)
	return s, err
}

// ResolvedRound is one round of GET /api/games/{id}/history.
type ResolvedRound = wire.ResolvedRound

// History returns a game's resolved rounds in order.
func (c *Client) History(ctx context.Context, gameID string) ([]ResolvedRound, error) {
	var out wire.History
	err := c.do(ctx, "GET", "/api/games/"+esc(gameID)+"/history", nil, &out)
	return out.Rounds, err
}

// AddFillers adds count (1 to arena.MaxFillersPerAdd) filler agents,
// which the server plays itself, to a game that has not started.
func (c *Client) AddFillers(ctx context.Context, gameID string, count int) ([]wire.FillerAgent, error) {
	var out wire.FillersAdded
	err := c.do(ctx, "POST", "/api/games/"+esc(gameID)+"/add-filler", wire.AddFiller{Count: wire.IntOf(count)}, &out)
	return out.Added, err
}

// TickFillers asks the server to play the fillers' due actions: one, or
// with drain all of them. A failed action is not an error here but the
// answer's Error, as the original answers it.
func (c *Client) TickFillers(ctx context.Context, gameID string, drain bool) (wire.FillerTick, error) {
	var out wire.FillerTick
	err := c.do(ctx, "POST", "/api/games/"+esc(gameID)+"/tick-filler"+query("drain", strconv.FormatBool(drain)), nil, &out)
	return out, err
}

// DemoAgent is one agent of a demo game.
type DemoAgent = wire.DemoAgent

// CreateDemo creates a game with Alice, Bob and Charlie registered, and
// returns its ID and the agents.
func (c *Client) CreateDemo(ctx context.Context) (string, []DemoAgent, error) {
	var out wire.Demo
	err := c.do(ctx, "POST", "/api/demo/create", nil, &out)
	return out.GameID, out.Agents, err
}

// GameEvent is one event of a game's stream: a feed item, or a change of
// the game's state.
type GameEvent struct {
	// Type is "feed" or "state".
	Type string
	// Seq is a feed item's position in the game's feed, from 1: pass the
	// last one seen to GameEvents to resume after it.
	Seq  int
	Item wire.FeedItem // set on a "feed" event only
	// Version and Status are the game's after a change.
	Version int64
	Status  string // a wire.State.Status value
}

// GameEvents follows GET /api/games/{id}/events: every feed item after
// the after-th (0 for all), and a "state" event after every change. The
// channel is closed when ctx ends or the stream does; a reader that stops
// reading must end ctx. An unknown game is store.ErrNotFound.
func (c *Client) GameEvents(ctx context.Context, gameID string, after int) (<-chan GameEvent, error) {
	var h http.Header
	if after > 0 {
		h = http.Header{"Last-Event-Id": {strconv.Itoa(after)}}
	}
	return subscribe(ctx, c, "/api/games/"+esc(gameID)+"/events", h, func(ev event) (GameEvent, bool) {
		g := GameEvent{Type: ev.name}
		switch ev.name {
		case "feed":
			seq, err := strconv.Atoi(ev.id)
			g.Seq = seq
			// Decoded before the return reads g: Go leaves the order of
			// reading g and calling Unmarshal in one return unspecified.
			ok := err == nil && json.Unmarshal([]byte(ev.data), &g.Item) == nil
			return g, ok
		case "state":
			var d wire.GameEventState
			err := json.Unmarshal([]byte(ev.data), &d)
			g.Version, g.Status = d.Version, d.Status
			return g, err == nil
		}
		return g, false
	})
}
