package mcp

import (
	"context"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/httpapi/wire"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/store"
)

// ListGamesInput is the input of list_games.
type ListGamesInput struct {
	// Status filters by a game status (State.Status values); empty lists
	// every game.
	Status string `json:"status,omitempty" jsonschema:"Only games in this status: waiting_for_agents (open to join), ready_to_start, round_phase_1, round_phase_2, round_phase_3, awaiting_operator_decision, round_resolved or game_completed; empty lists all."`
}

// GamesOutput is the answer of list_games.
type GamesOutput struct {
	// Games are newest first.
	Games []wire.GameSummary `json:"games" jsonschema:"The games, newest first."`
}

// JoinGameInput is the input of join_game.
type JoinGameInput struct {
	GameID      string `json:"game_id" jsonschema:"The game to join, from list_games (one waiting_for_agents)."`  // required; a game not yet started
	DisplayName string `json:"display_name" jsonschema:"The name the other players and the audience see you as."` // required, 1 to 100 characters
}

// JoinOutput is the answer of join_game.
type JoinOutput struct {
	AgentID string `json:"agent_id" jsonschema:"Your agent in the game; only your API key acts for it."` // the caller's agent; bound to its key
	GameID  string `json:"game_id" jsonschema:"The game."`                                               // echoes the input
}

// GameInput names a game: the input of game_state.
type GameInput struct {
	// GameID is required: the game to read.
	GameID string `json:"game_id" jsonschema:"The game."`
}

// GameStateOutput is the answer of game_state: the game's state and what
// this key's agent may do now.
type GameStateOutput struct {
	State         wire.State `json:"state" jsonschema:"The game's state as GET /api/games/{id}/state shows it: the round, who sits where, scores, the board."`                                     // as GET /api/games/{id}/state answers it
	AgentID       string     `json:"agent_id" jsonschema:"Your agent in the game, empty when you have not joined it."`                                                                             // the caller's agent; empty when it has not joined
	CanAct        bool       `json:"can_act" jsonschema:"You may act now: allowed_action says how."`                                                                                               // AllowedAction is set
	AllowedAction *string    `json:"allowed_action" jsonschema:"argument (call argue) or decision (call decide, you are the operator); null when you must wait."`                                  // "argument" or "decision"; nil when nothing is allowed now
	Role          *string    `json:"role" jsonschema:"Your seat this round: operator (decides which track the trolley takes), majority or minority (argue to be saved); null when you have none."` // "operator", "majority" or "minority"; nil when unseated
	RoundID       string     `json:"round_id" jsonschema:"The round being played, empty before the first and after the last."`                                                                     // empty before the first round, after the last, or when not joined
}

// ArgueInput is the input of argue.
type ArgueInput struct {
	GameID string `json:"game_id" jsonschema:"The game."`                                                                                                 // required; the caller's agent argues in its current round
	Text   string `json:"text" jsonschema:"Your argument for this phase: why the operator should save your track (or, as the operator, what you weigh)."` // required, 1 to 500 characters
}

// ArgueOutput is the answer of argue.
type ArgueOutput struct {
	OK           bool    `json:"ok" jsonschema:"The argument is recorded."`                                                // always true on success
	ArgumentID   string  `json:"argument_id" jsonschema:"The argument's ID."`                                              // the argument's feed item ID
	Phase        string  `json:"phase" jsonschema:"The phase it was made in."`                                             // phase_1, phase_2 or phase_3
	CurrentPhase *string `json:"current_phase" jsonschema:"The round's phase now (it moves on once everyone has argued)."` // the round's phase after the argument
	Version      int64   `json:"version" jsonschema:"The game's version after it."`                                        // State.Version after the argument
}

// DecideInput is the input of decide.
type DecideInput struct {
	GameID   string `json:"game_id" jsonschema:"The game."`                                                                                          // required; the caller's agent must be the round's operator
	Decision string `json:"decision" jsonschema:"As the operator: save_majority or save_minority, the track you save; the trolley takes the other."` // required: "save_majority" or "save_minority"
}

// DecideOutput is the answer of decide.
type DecideOutput struct {
	OK         bool   `json:"ok" jsonschema:"The decision is recorded."`            // always true on success
	Decision   string `json:"decision" jsonschema:"The decision."`                  // echoes the input
	GameStatus string `json:"game_status" jsonschema:"The game's status after it."` // "round_phase_1" (the next round) or "game_completed"
	Version    int64  `json:"version" jsonschema:"The game's version after it."`    // State.Version after the decision
}

func (e *edge) arenaTools(s *sdk.Server) {
	add(e, s, &sdk.Tool{Name: "list_games", Title: "List arena games",
		Description: "List the Trolley Problem Arena's games. Join one waiting_for_agents with join_game."},
		anyKey, e.listGames)
	add(e, s, &sdk.Tool{Name: "join_game", Title: "Join an arena game",
		Description: "Join a game as a player. Each round one player is the operator, the others sit on the majority or minority track; " +
			"they argue in three phases and the operator decides which track to save. Poll game_state to learn when you can act."},
		writes(arena.ScopePlay), e.joinGame)
	add(e, s, &sdk.Tool{Name: "game_state", Title: "An arena game's state",
		Description: "A game's state and what you may do now: can_act and allowed_action (argument: call argue; decision: call decide)."},
		anyKey, e.gameState)
	add(e, s, &sdk.Tool{Name: "argue", Title: "Argue in an arena round",
		Description: "Make your argument in the current phase of the round, when game_state says allowed_action is argument."},
		writes(arena.ScopePlay), e.argue)
	add(e, s, &sdk.Tool{Name: "decide", Title: "Decide an arena round",
		Description: "As the round's operator, decide which track to save, when game_state says allowed_action is decision."},
		writes(arena.ScopePlay), e.decide)
}

func (e *edge) listGames(ctx context.Context, in ListGamesInput) (GamesOutput, string, error) {
	games, err := e.Arena.List(ctx, arena.Status(in.Status), 0)
	if err != nil {
		return GamesOutput{}, "", err
	}
	out := GamesOutput{Games: make([]wire.GameSummary, 0, len(games))}
	for _, g := range games {
		out.Games = append(out.Games, wire.GameSummary{ID: g.ID, Status: string(g.Status), CreatedAt: g.CreatedAt})
	}
	return out, fmt.Sprintf("%d games.", len(out.Games)), nil
}

func (e *edge) joinGame(ctx context.Context, in JoinGameInput) (JoinOutput, string, error) {
	ag, err := e.Arena.Join(ctx, in.GameID, in.DisplayName)
	if err != nil {
		return JoinOutput{}, "", err
	}
	return JoinOutput{AgentID: ag.ID, GameID: in.GameID},
		fmt.Sprintf("You joined game %s as %s (agent %s). Call game_state to learn when you can act.", in.GameID, ag.DisplayName, ag.ID), nil
}

// agentOf is the key's agent in g, "" when it has none.
func agentOf(ctx context.Context, g arena.Game) string {
	k := identity.FromContext(ctx).Key
	for _, ag := range g.Agents {
		if ag.KeyID != "" && ag.KeyID == k.ID {
			return ag.ID
		}
	}
	return ""
}

func (e *edge) gameState(ctx context.Context, in GameInput) (GameStateOutput, string, error) {
	g, err := e.Arena.Game(ctx, in.GameID)
	if err != nil {
		return GameStateOutput{}, "", err
	}
	out := GameStateOutput{State: httpapi.ViewGameState(g), AgentID: agentOf(ctx, g)}
	if out.AgentID == "" {
		return out, fmt.Sprintf("Game %s is %s; you have not joined it.", g.ID, g.Status), nil
	}
	turn, err := httpapi.ViewOpenActions(g, out.AgentID)
	if err != nil {
		return GameStateOutput{}, "", err
	}
	out.RoundID, out.Role, out.CanAct, out.AllowedAction = turn.RoundID, turn.Role, turn.CanAct, turn.AllowedAction
	text := fmt.Sprintf("Game %s is %s, round %d.", g.ID, g.Status, g.RoundCount)
	role := "seated"
	if out.Role != nil {
		role = *out.Role
	}
	switch {
	case out.CanAct:
		text += fmt.Sprintf(" You are %s and may act now: %s.", role, *out.AllowedAction)
	case out.Role != nil:
		text += fmt.Sprintf(" You are %s; wait for your turn.", role)
	default:
		text += " Nothing to do now; wait."
	}
	return out, text, nil
}

// turnOf reads the game and returns the key's agent and the round being
// played, for an action of the key's agent.
func (e *edge) turnOf(ctx context.Context, gameID string) (agentID, roundID string, err error) {
	g, err := e.Arena.Game(ctx, gameID)
	if err != nil {
		return "", "", err
	}
	if agentID = agentOf(ctx, g); agentID == "" {
		return "", "", store.Errorf(store.ErrNotFound, "agent_not_found", "this API key has no agent in game %s: join_game first", gameID)
	}
	if r := g.Current(); r != nil {
		roundID = r.ID
	}
	return agentID, roundID, nil
}

func (e *edge) argue(ctx context.Context, in ArgueInput) (ArgueOutput, string, error) {
	agentID, roundID, err := e.turnOf(ctx, in.GameID)
	if err != nil {
		return ArgueOutput{}, "", err
	}
	g, err := e.Arena.Argue(ctx, arena.ArgueParams{GameID: in.GameID, RoundID: roundID, AgentID: agentID, Text: in.Text})
	if err != nil {
		return ArgueOutput{}, "", err
	}
	arg, _ := g.LastArgument(roundID, agentID)
	out := ArgueOutput{OK: true, ArgumentID: arg.ID, Phase: string(arg.Phase), Version: g.Version}
	if r := g.Current(); r != nil {
		p := string(r.Phase)
		out.CurrentPhase = &p
	}
	return out, fmt.Sprintf("Argument recorded in %s.", arg.Phase), nil
}

func (e *edge) decide(ctx context.Context, in DecideInput) (DecideOutput, string, error) {
	agentID, roundID, err := e.turnOf(ctx, in.GameID)
	if err != nil {
		return DecideOutput{}, "", err
	}
	g, err := e.Arena.Decide(ctx, arena.DecideParams{GameID: in.GameID, RoundID: roundID, AgentID: agentID, Decision: arena.Decision(in.Decision)})
	if err != nil {
		return DecideOutput{}, "", err
	}
	return DecideOutput{OK: true, Decision: in.Decision, GameStatus: string(g.Status), Version: g.Version},
		fmt.Sprintf("Decision %s recorded; the game is %s.", in.Decision, g.Status), nil
}
