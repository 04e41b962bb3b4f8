package client

import (
	"context"
	"encoding/json"
	"time"

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

// WorkQuery filters the Prism work queue (GET /api/v1/jobs/work). Zero
// fields are not sent: they do not filter, and an empty Strategy takes the
// server's default, slots.StrategyOldest.
type WorkQuery struct {
	// Role is a stage slot's role, such as "contributor" or
	// prism.RoleConsensus.
	Role string
	// Layer is a protocol layer, from 1.
	Layer int
	// Domain is a claim's domain.
	Domain string
	// Strategy is slots.StrategyOldest (the oldest open slot first) or
	// slots.StrategyRandom (any eligible slot, so agents polling together
	// spread out); another value is store.ErrInvalid.
	Strategy slots.Strategy
}

// NextWork asks the Prism work queue for a stage slot; store.ErrNotFound
// when there is none.
func (c *Client) NextWork(ctx context.Context, q WorkQuery) (Work, error) {
	var w Work
	err := c.do(ctx, "GET", "/api/v1/jobs/work"+query("role", q.Role, "layer", num(q.Layer), "domain", q.Domain, "strategy", string(q.Strategy)), nil, &w)
	return w, err
}

// TakeStage takes a stage slot.
func (c *Client) TakeStage(ctx context.Context, claimID, slotID string) error {
	return c.do(ctx, "POST", "/api/v1/claims/"+esc(claimID)+"/stage-slots/"+esc(slotID)+"/take", nil, nil)
}

// TakeNextWork polls the Prism work queue, filtered by q, until it wins a
// stage slot, and returns the work it took, with the same back-off as
// TakeNextJob.
func (c *Client) TakeNextWork(ctx context.Context, q WorkQuery, maxWait time.Duration) (Work, error) {
	return takeNext(ctx, maxWait,
		func() (Work, error) { return c.NextWork(ctx, q) },
		func(w Work) error { return c.TakeStage(ctx, w.Claim.ID, w.Slot.ID) })
}

// StageSubmission is an agent's work on a stage slot it holds, the body of
// POST .../stage-slots/{id}/done. Zero fields are not sent; which ones a
// slot needs depends on its layer (see prism.Layer): prose in Body,
// structured Output of the layer's shape, a Confidence for consensus.
type StageSubmission struct {
	// Body is the slot's prose, at most prism.MaxBodyLen bytes.
	Body string `json:"body,omitempty"`
	// Output is the structured output, encoded as JSON; nil is not sent.
	Output any `json:"output,omitempty"`
	// Confidence is from 0 to 1; nil is not sent.
	Confidence *float64 `json:"confidence,omitempty"`
}

// FinishStage submits the work of a stage slot the caller holds.
func (c *Client) FinishStage(ctx context.Context, claimID, slotID string, s StageSubmission) error {
	return c.do(ctx, "POST", "/api/v1/claims/"+esc(claimID)+"/stage-slots/"+esc(slotID)+"/done", s, nil)
}

// Pipeline is the view of GET /api/v1/claims/{id}/pipeline.
type Pipeline struct {
	ClaimID      string                 `json:"claimId"`
	Protocol     string                 `json:"protocol"`
	Status       prism.Status           `json:"status"`
	CurrentLayer int                    `json:"currentLayer"`
	Phase        prism.Phase            `json:"phase"`
	Layers       []PipelineLayer        `json:"layers"`
	Consensus    *prism.ConsensusRecord `json:"consensus"`
	Version      int64                  `json:"version"`
}

// PipelineLayer is one layer of a Pipeline.
type PipelineLayer struct {
	Layer int    `json:"layer"`
	Name  string `json:"name"`
	// Phase is pending, work, consensus or done.
	Phase string            `json:"phase"`
	Slots []prism.StageSlot `json:"slots"`
	// AvgConfidence is the layer's last consensus average, once it has one.
	AvgConfidence *float64 `json:"avgConfidence"`
}

// Pipeline returns a claim's pipeline.
func (c *Client) Pipeline(ctx context.Context, claimID string) (Pipeline, error) {
	var p Pipeline
	err := c.do(ctx, "GET", "/api/v1/claims/"+esc(claimID)+"/pipeline", nil, &p)
	return p, err
}

// Consensus returns a claim's consensus record; store.ErrNotFound until
// its pipeline has written one.
func (c *Client) Consensus(ctx context.Context, claimID string) (prism.ConsensusRecord, error) {
	var r prism.ConsensusRecord
	err := c.do(ctx, "GET", "/api/v1/claims/"+esc(claimID)+"/consensus", nil, &r)
	return r, err
}

// Flags lists a claim's pipeline flags, open and resolved, oldest first.
func (c *Client) Flags(ctx context.Context, claimID string) ([]prism.Flag, error) {
	var out struct{ Items []prism.Flag }
	err := c.do(ctx, "GET", "/api/v1/claims/"+esc(claimID)+"/flags", nil, &out)
	return out.Items, err
}

// FlagResolution is a reviewer's answer to a pipeline flag, the body of
// POST .../flags/{id}/resolve.
type FlagResolution struct {
	// Action is prism.FlagAdvance (apply the layer's effect and move on)
	// or prism.FlagRetry (open a fresh consensus round of the layer).
	Action prism.FlagAction `json:"action"`
	// Note is kept with the resolved flag; empty is not sent.
	Note string `json:"note,omitempty"`
}

// ResolveFlag resolves a pipeline flag (scope pipeline:review) as r says.
// A flag already resolved is store.ErrConflict; an unknown action,
// store.ErrInvalid.
func (c *Client) ResolveFlag(ctx context.Context, claimID, flagID string, r FlagResolution) error {
	return c.do(ctx, "POST", "/api/v1/claims/"+esc(claimID)+"/flags/"+esc(flagID)+"/resolve", r, nil)
}

// Protocols lists the deliberation protocols a claim may run under,
// Prism v1 included.
func (c *Client) Protocols(ctx context.Context) ([]prism.Protocol, error) {
	var out struct{ Items []prism.Protocol }
	err := c.do(ctx, "GET", "/api/v1/protocols", nil, &out)
	return out.Items, err
}

// RegisterProtocol registers (or replaces) a protocol (scope keys:admin)
// and returns it as stored; a definition that does not validate is
// store.ErrInvalid.
func (c *Client) RegisterProtocol(ctx context.Context, p prism.Protocol) (prism.Protocol, error) {
	var out prism.Protocol
	err := c.do(ctx, "POST", "/api/v1/protocols", p, &out)
	return out, err
}
