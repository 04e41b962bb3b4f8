package httpapi

import (
	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/httpapi/wire"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
)

// viewAll is ds in their wire shapes, view mapping each: a list, empty
// (never null) for none.
func viewAll[D, W any](ds []D, view func(D) W) []W {
	out := make([]W, len(ds))
	for i, d := range ds {
		out[i] = view(d)
	}
	return out
}

// The views below are the domain values in the wire shapes the routes
// answer with, for the other edges of the same services (httpapi/mcp), so
// that an agent reads one shape whichever edge it came through. Each is
// the function the routes themselves use.

// ViewJob is a role-slot job as GET /api/v1/jobs/slots answers it.
func ViewJob(j slots.Job) wire.Job { return viewJob(j) }

// ViewComment is a comment as the comment routes answer it.
func ViewComment(c slots.Comment) wire.Comment { return viewComment(c) }

// ViewWork is a stage slot's work as GET /api/v1/jobs/work answers it: the
// slot, its claim, the pipeline and the context of the slot's layer.
func ViewWork(w prism.Work) wire.Work {
	return wire.Work{Slot: viewSlot(w.Slot), Claim: viewClaim(w.Claim), Pipeline: viewPipeline(w.Pipeline), Context: workContext(w.Pipeline, w.Slot)}
}

// ViewConsensus is a claim's consensus record as GET
// /api/v1/claims/{id}/consensus answers it.
func ViewConsensus(claimID string, rec prism.ConsensusRecord) wire.Consensus {
	return viewConsensus(claimID, rec)
}

// ViewPipeline is a claim's pipeline as GET /api/v1/claims/{id}/pipeline
// answers it.
func ViewPipeline(p prism.Pipeline) wire.Pipeline { return viewPipeline(p) }

// ViewGameState is a game as GET /api/games/{id}/state answers it.
func ViewGameState(g arena.Game) wire.State { return stateView(g) }

// ViewPrompt is a discussion prompt as the discussion routes answer it.
func ViewPrompt(p discussion.Prompt) wire.Prompt { return promptWire(p) }

// ViewMessage is a squad-chat message as the squad-chat routes answer it.
func ViewMessage(m discussion.Message) wire.ChatMessage { return chatMessageView(m) }

// ViewCalibration is a claim's calibration as the calibration routes
// answer it.
func ViewCalibration(c slots.Calibration) wire.Calibration { return viewCalibration(c) }

// ViewClaim is a claim as the claim routes answer it.
func ViewClaim(c slots.Claim) wire.Claim { return viewClaim(c) }

// ViewRoleSlot is a role slot as the slot routes answer it.
func ViewRoleSlot(s slots.Slot) wire.RoleSlot { return viewRoleSlot(s) }

// ViewOpenActions is what agentID may do now in g, as
// GET /api/games/{id}/open-actions answers it (arena.Game.Turn in wire
// form).
func ViewOpenActions(g arena.Game, agentID string) (wire.OpenActions, error) {
	t, err := g.Turn(agentID)
	if err != nil {
		return wire.OpenActions{}, err
	}
	out := wire.OpenActions{AgentID: agentID, CurrentPhase: currentPhase(g), RoundID: t.RoundID}
	if t.Role != "" {
		role := string(t.Role)
		out.Role = &role
	}
	if t.Allowed != "" {
		allowed := string(t.Allowed)
		out.CanAct, out.AllowedAction = true, &allowed
	}
	return out, nil
}
