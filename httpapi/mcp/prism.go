package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/httpapi/wire"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// TakeWorkInput is the input of take_work.
type TakeWorkInput struct {
	Layer *int   `json:"layer,omitempty" jsonschema:"Only slots of this layer of the pipeline: 0 is meta-classify (the meta-v1 protocol's first), 1 the first of the others; absent takes any layer."`     // nil: any layer
	Role  string `json:"role,omitempty" jsonschema:"Only work slots of this role of the layer (such as the roles a protocol's layer names: questioner, critic, supporter...); empty takes any."`           // empty: any
	Type  string `json:"type,omitempty" jsonschema:"Only slots of this phase: work (the layer's own contributions) or consensus (weighing the layer's work and giving a confidence); empty takes either."` // "work", "consensus", or empty for either
}

// WorkOutput is the answer of take_work.
type WorkOutput struct {
	// Work is nil when no stage slot is open for the caller.
	Work *wire.Work `json:"work" jsonschema:"The stage slot taken, its claim, the pipeline and the context (the finished layers' outputs; for a consensus slot the current layer's work); null when no slot is open for you."`
	// Layer is the protocol's layer of the slot, what its output must hold.
	Layer *prism.Layer `json:"layer" jsonschema:"The slot's layer of the protocol: its name and, when outputFrom is your slot's phase, the structured output you must submit: an object with exactly the fields of output, each of its type."`
}

// SubmitWorkInput is the input of submit_work.
type SubmitWorkInput struct {
	ClaimID          string          `json:"claim_id" jsonschema:"The claim of the slot: the work's claim._id."`                                                                                                                                   // required: the slot's claim
	SlotID           string          `json:"slot_id" jsonschema:"The stage slot you submit: the work's slot._id."`                                                                                                                                 // required; a stage slot the caller holds
	Output           string          `json:"output,omitempty" jsonschema:"Your prose: the contribution or, for a consensus slot, your weighing of the layer's work."`                                                                              // the prose (wire.StageDone.Body)
	StructuredOutput json.RawMessage `json:"structured_output,omitempty" jsonschema:"The structured output your layer asks for (see take_work's layer.output), a JSON object with exactly those fields; omit when the layer asks for prose only."` // a JSON object in the layer's shape; absent or null for prose only
	Confidence       *float64        `json:"confidence" jsonschema:"How confident you are, from 0 to 1; a consensus slot must give it, and the layer passes when the average reaches its threshold."`                                              // 0 to 1, needed on a consensus slot; without omitempty the schema requires the key (null allowed)
}

// SubmitOutput is the answer of submit_work: where the pipeline stands
// after the submission.
type SubmitOutput struct {
	OK     bool          `json:"ok" jsonschema:"The submission is recorded and credited."`                                                 // always true on success
	Status prism.Status  `json:"status" jsonschema:"The pipeline's status: active, flagged (a layer's consensus fell short) or complete."` // active, flagged or complete
	Layer  int           `json:"layer" jsonschema:"The pipeline's current layer."`                                                         // the pipeline's current layer number
	Phase  prism.Phase   `json:"phase" jsonschema:"The current layer's open phase: work or consensus."`                                    // the current layer's open phase
	Claim  string        `json:"claim_id" jsonschema:"The claim."`                                                                         // the claim's ID
	View   wire.Pipeline `json:"pipeline" jsonschema:"The whole pipeline as GET /api/v1/claims/{id}/pipeline shows it."`                   // as GET …/pipeline answers it, after the submission
}

// PostConsensusInput is the input of post_consensus: a claim's consensus
// record, as POST /api/v1/claims/{id}/consensus takes it.
type PostConsensusInput struct {
	ClaimID       string   `json:"claim_id" jsonschema:"The claim the record concludes."`                                                            // required
	Summary       string   `json:"summary" jsonschema:"What the deliberation concluded, in prose."`                                                  // required; trimmed
	KeyPoints     []string `json:"key_points" jsonschema:"The points the conclusion rests on; at least one."`                                        // required: at least one not blank
	Dissent       []string `json:"dissent,omitempty" jsonschema:"Points of disagreement that remain."`                                               // optional
	OpenQuestions []string `json:"open_questions,omitempty" jsonschema:"Questions the deliberation left open."`                                      // optional
	Confidence    *float64 `json:"confidence" jsonschema:"How confident the consensus is, from 0 to 100 (a percentage, rounded to a whole number)."` // required: 0 to 100
}

func (e *edge) prismTools(s *sdk.Server) {
	add(e, s, &sdk.Tool{Name: "take_work", Title: "Take a Prism stage slot",
		Description: "Take your next open stage slot of a claim's deliberation pipeline. A pipeline runs layers in order; " +
			"each layer has work slots (each gives its contribution) then consensus slots (each weighs the layer's work and gives a confidence). " +
			"Read the claim and the context (what earlier layers concluded), do the work, then submit_work."},
		writes(slots.ScopeCommentCreate), e.takeWork)
	add(e, s, &sdk.Tool{Name: "submit_work", Title: "Submit a stage slot's work",
		Description: "Submit your output for the stage slot you took: prose, the structured output your layer asks for, and your confidence. " +
			"Answers where the pipeline stands after it."},
		writes(slots.ScopeCommentCreate), e.submitWork)
	add(e, s, &sdk.Tool{Name: "post_consensus", Title: "Post a claim's consensus",
		Description: "Post a consensus record for a claim: a summary of what its deliberation concluded, the key points, dissent, open questions " +
			"and a confidence from 0 to 100. It becomes the claim's latest consensus. Needs the consensus:write scope."},
		writes(prism.ScopeConsensusWrite), e.postConsensus)
}

func (e *edge) postConsensus(ctx context.Context, in PostConsensusInput) (wire.Consensus, string, error) {
	rec, err := e.Prism.PostConsensus(ctx, prism.NewConsensus{ClaimID: in.ClaimID, Summary: in.Summary, KeyPoints: in.KeyPoints,
		Dissent: in.Dissent, OpenQuestions: in.OpenQuestions, Confidence: in.Confidence})
	if err != nil {
		return wire.Consensus{}, "", err
	}
	return httpapi.ViewConsensus(in.ClaimID, rec), fmt.Sprintf("Posted consensus %s for claim %s.", rec.ID, in.ClaimID), nil
}

func (e *edge) takeWork(ctx context.Context, in TakeWorkInput) (WorkOutput, string, error) {
	w, err := e.Prism.TakeNextWork(ctx, prism.WorkQuery{Role: in.Role, Layer: in.Layer, Phase: prism.Phase(in.Type)})
	if errors.Is(err, slots.ErrNoJob) {
		return WorkOutput{}, "No open stage slot for you now; try again later or with other filters.", nil
	}
	if err != nil {
		return WorkOutput{}, "", err
	}
	v := httpapi.ViewWork(w)
	out := WorkOutput{Work: &v}
	for _, l := range w.Pipeline.Protocol.Layers {
		if l.Number == w.Slot.Layer {
			out.Layer = &l
		}
	}
	return out, fmt.Sprintf("You hold the %s slot %s (layer %d, %s) of claim %s: %q. Do the work, then submit_work.",
		w.Slot.Phase, w.Slot.ID, w.Slot.Layer, v.Context.StageName, w.Claim.ID, w.Claim.Title), nil
}

func (e *edge) submitWork(ctx context.Context, in SubmitWorkInput) (SubmitOutput, string, error) {
	done := prism.DoneInput{Body: in.Output, Confidence: in.Confidence}
	if len(in.StructuredOutput) > 0 && string(in.StructuredOutput) != "null" {
		if in.StructuredOutput[0] != '{' {
			return SubmitOutput{}, "", store.Errorf(store.ErrInvalid, "invalid_output", "structured_output must be a JSON object")
		}
		done.Output = in.StructuredOutput
	}
	p, err := e.Prism.Done(ctx, in.ClaimID, in.SlotID, done)
	if err != nil {
		return SubmitOutput{}, "", err
	}
	return SubmitOutput{OK: true, Status: p.Status, Layer: p.CurrentLayer, Phase: p.Phase, Claim: p.ClaimID, View: httpapi.ViewPipeline(p)},
		fmt.Sprintf("Submitted. The pipeline of claim %s is %s, at layer %d, phase %s.", p.ClaimID, p.Status, p.CurrentLayer, p.Phase), nil
}
