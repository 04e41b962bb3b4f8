package client

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
)

// Work is what GET /api/v1/jobs/work hands an agent.
type Work struct {
	Slot     prism.StageSlot `json:"slot"`
	Claim    slots.Claim     `json:"claim"`
	Pipeline json.RawMessage `json:"pipeline"`
	Context  json.RawMessage `json:"context"`
}

// NextWork asks the Prism work queue for a stage slot; store.ErrNotFound
// when there is none.
func (c *Client) NextWork(ctx context.Context, role string, layer int, domain string) (Work, error) {
	var w Work
	l := ""
	if layer > 0 {
		l = fmt.Sprint(layer)
	}
	err := c.do(ctx, "GET", "/api/v1/jobs/work"+query("role", role, "layer", l, "domain", domain), nil, &w)
	return w, err
}

// TakeStage takes a stage slot.
func (c *Client) TakeStage(ctx context.Context, claimID, slotID string) error {
	return c.do(ctx, "POST", "/api/v1/claims/"+esc(claimID)+"/stage-slots/"+esc(slotID)+"/take", nil, nil)
}

// FinishStage submits a stage slot's work.
func (c *Client) FinishStage(ctx context.Context, claimID, slotID, body string, output any, confidence *float64) error {
	in := map[string]any{"body": body}
	if output != nil {
		in["output"] = output
	}
	if confidence != nil {
		in["confidence"] = *confidence
	}
	return c.do(ctx, "POST", "/api/v1/claims/"+esc(claimID)+"/stage-slots/"+esc(slotID)+"/done", in, nil)
}

// Pipeline is the view of GET /api/v1/claims/{id}/pipeline.
type Pipeline struct {
	ClaimID      string       `json:"claimId"`
	Protocol     string       `json:"protocol"`
	Status       prism.Status `json:"status"`
	CurrentLayer int          `json:"currentLayer"`
	Phase        prism.Phase  `json:"phase"`
}

// Pipeline returns a claim's pipeline.
func (c *Client) Pipeline(ctx context.Context, claimID string) (Pipeline, error) {
	var p Pipeline
	err := c.do(ctx, "GET", "/api/v1/claims/"+esc(claimID)+"/pipeline", nil, &p)
	return p, err
}

// Consensus returns a claim's consensus record.
func (c *Client) Consensus(ctx context.Context, claimID string) (prism.ConsensusRecord, error) {
	var r prism.ConsensusRecord
	err := c.do(ctx, "GET", "/api/v1/claims/"+esc(claimID)+"/consensus", nil, &r)
	return r, err
}

// ResolveFlag resolves a pipeline flag (scope pipeline:review).
func (c *Client) ResolveFlag(ctx context.Context, claimID, flagID string, action prism.FlagAction, note string) error {
	return c.do(ctx, "POST", "/api/v1/claims/"+esc(claimID)+"/flags/"+esc(flagID)+"/resolve", map[string]any{"action": action, "note": note}, nil)
}

// AskSquad creates a discussion prompt.
func (c *Client) AskSquad(ctx context.Context, requester, prompt string, required, timeoutMinutes int) (discussion.Prompt, error) {
	var out struct{ Prompt discussion.Prompt }
	in := map[string]any{"requester_agent": requester, "prompt_message": prompt}
	if required > 0 {
		in["required_responses"] = required
	}
	if timeoutMinutes > 0 {
		in["timeout_minutes"] = timeoutMinutes
	}
	err := c.do(ctx, "POST", "/api/discussion", in, &out)
	return out.Prompt, err
}

// OpenPrompts lists the prompts agent could answer.
func (c *Client) OpenPrompts(ctx context.Context, agent string) ([]discussion.Prompt, error) {
	var out struct{ Prompts []discussion.Prompt }
	err := c.do(ctx, "GET", "/api/discussion"+query("status", "collecting", "agent", agent), nil, &out)
	return out.Prompts, err
}

// Respond answers a prompt.
func (c *Client) Respond(ctx context.Context, promptID, agent, message string) error {
	return c.do(ctx, "POST", "/api/discussion/"+esc(promptID), map[string]any{"agent_name": agent, "message": message}, nil)
}

// WaitForDiscussion long-polls a prompt until it is ready or final (or ctx
// ends) and returns it with the collected context.
func (c *Client) WaitForDiscussion(ctx context.Context, promptID string) (discussion.Prompt, error) {
	for {
		var out struct {
			Prompt discussion.Prompt `json:"prompt"`
			Ready  bool              `json:"ready"`
		}
		if err := c.do(ctx, "GET", "/api/discussion/"+esc(promptID)+"?wait=30", nil, &out); err != nil {
			return discussion.Prompt{}, err
		}
		if out.Ready || out.Prompt.Final() {
			return out.Prompt, nil
		}
		if err := ctx.Err(); err != nil {
			return discussion.Prompt{}, err
		}
	}
}

// ArenaState is the part of GET /api/games/{id}/state an agent acts on.
type ArenaState struct {
	GameID             string          `json:"game_id"`
	Status             string          `json:"status"`
	CurrentRoundNumber int             `json:"current_round_number"`
	CurrentRoundID     *string         `json:"current_round_id"`
	CurrentPhase       *string         `json:"current_phase"`
	Version            int64           `json:"version"`
	Raw                json.RawMessage `json:"-"`
}

// CreateGame creates an arena game.
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

// Register registers an agent; a non-empty token then guards its actions.
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

// WaitState long-polls the game until its version is not version (or wait
// passes).
func (c *Client) WaitState(ctx context.Context, gameID string, version int64, wait time.Duration) (ArenaState, error) {
	var s ArenaState
	err := c.do(ctx, "GET", fmt.Sprintf("/api/games/%s/state?version=%d&wait=%d", esc(gameID), version, int(wait/time.Second)), nil, &s)
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
