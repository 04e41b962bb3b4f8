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

// NextWork asks the Prism work queue for a stage slot; store.ErrNotFound
// when there is none.
func (c *Client) NextWork(ctx context.Context, role string, layer int, domain string) (Work, error) {
	var w Work
	err := c.do(ctx, "GET", "/api/v1/jobs/work"+query("role", role, "layer", num(layer), "domain", domain), nil, &w)
	return w, err
}

// TakeStage takes a stage slot.
func (c *Client) TakeStage(ctx context.Context, claimID, slotID string) error {
	return c.do(ctx, "POST", "/api/v1/claims/"+esc(claimID)+"/stage-slots/"+esc(slotID)+"/take", nil, nil)
}

// TakeNextWork polls the Prism work queue (role, layer and domain filter
// it when set) until it wins a stage slot, and returns the work it took,
// with the same back-off as TakeNextJob.
func (c *Client) TakeNextWork(ctx context.Context, role string, layer int, domain string, maxWait time.Duration) (Work, error) {
	return takeNext(ctx, maxWait,
		func() (Work, error) { return c.NextWork(ctx, role, layer, domain) },
		func(w Work) error { return c.TakeStage(ctx, w.Claim.ID, w.Slot.ID) })
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

// ResolveFlag resolves a pipeline flag (scope pipeline:review): advance
// applies the layer's effect and moves on, retry opens a fresh consensus
// round of the layer. A flag already resolved is store.ErrConflict.
func (c *Client) ResolveFlag(ctx context.Context, claimID, flagID string, action prism.FlagAction, note string) error {
	return c.do(ctx, "POST", "/api/v1/claims/"+esc(claimID)+"/flags/"+esc(flagID)+"/resolve", map[string]any{"action": action, "note": note}, nil)
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
