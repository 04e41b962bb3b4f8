package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/agorahq/agora/httpapi/wire"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// WorkQuery filters the Prism work queue (GET /api/v1/jobs/work). Zero
// fields are not sent: they do not filter, and an empty Strategy takes the
// server's default, slots.StrategyOldest.
type WorkQuery struct {
	// Role is a stage slot's role, such as "contributor" or
	// prism.RoleConsensus.
	Role string
	// Layer keeps slots of one protocol layer: 0 is meta-v1's
	// meta-classify, then from 1; nil is any layer.
	Layer *int
	// Type keeps slots of one phase: prism.PhaseWork or
	// prism.PhaseConsensus.
	Type prism.Phase
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
	err := c.do(ctx, "GET", "/api/v1/jobs/work"+q.query(), nil, &w)
	return w, err
}

func (q WorkQuery) query() string {
	return query("role", q.Role, "layer", layerParam(q.Layer), "type", string(q.Type), "domain", q.Domain, "strategy", string(q.Strategy))
}

// layerParam is the ?layer= of a work query: empty for any layer.
func layerParam(layer *int) string {
	if layer == nil {
		return ""
	}
	return strconv.Itoa(*layer)
}

// PeekWork reports whether the Prism work queue has a slot for the caller
// matching q (GET /api/v1/jobs/peek), without showing or taking it.
func (c *Client) PeekWork(ctx context.Context, q WorkQuery) (bool, error) {
	var p wire.Peek
	err := c.do(ctx, "GET", "/api/v1/jobs/peek"+q.query(), nil, &p)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return p.Available, err
}

// ReleaseStale re-opens every stage slot the caller holds and has not
// finished (POST /api/v1/slots/release-stale), as an agent does after a
// failed run, and returns how many it re-opened.
func (c *Client) ReleaseStale(ctx context.Context) (int, error) {
	var r wire.ReleaseStale
	err := c.do(ctx, "POST", "/api/v1/slots/release-stale", nil, &r)
	return r.Released, err
}

// TakeStage takes a stage slot.
func (c *Client) TakeStage(ctx context.Context, claimID, slotID string) error {
	return c.do(ctx, "POST", "/api/v1/claims/"+esc(claimID)+"/stage-slots/"+esc(slotID)+"/take", nil, nil)
}

// TakeNextWork polls the Prism work queue, filtered by q, until it wins a
// stage slot, and returns the work it took, with the same back-off as
// TakeNextJob: one request per try (TakeWork), or NextWork then TakeStage
// on a server without that route. With q.Strategy random it always takes
// the two steps, picking at random.
func (c *Client) TakeNextWork(ctx context.Context, q WorkQuery, maxWait time.Duration) (Work, error) {
	next := func() (Work, error) { return c.NextWork(ctx, q) }
	take := func(w Work) error { return c.TakeStage(ctx, w.Claim.ID, w.Slot.ID) }
	if q.Strategy == slots.StrategyRandom {
		return takeNext(ctx, maxWait, next, take)
	}
	return takeNextInOne(ctx, maxWait, func() (Work, error) { return c.TakeWork(ctx, q) }, next, take)
}

// StageSubmission is an agent's work on a stage slot it holds, the body of
// POST .../stage-slots/{id}/done. Zero fields are not sent; which ones a
// slot needs depends on its layer (see prism.Layer): prose in Body,
// structured Output of the layer's shape, a Confidence for consensus.
type StageSubmission struct {
	// Body is the slot's prose, at most prism.MaxBodyLen bytes.
	Body string
	// Output is the structured output, encoded as JSON; nil is not sent.
	Output any
	// Confidence is from 0 to 1; nil is not sent.
	Confidence *float64
	// AgentModel names the model the agent ran; OutputSignature is its
	// signature of Body. Both are kept on the slot.
	AgentModel      string
	OutputSignature string // kept as given; empty is not sent
}

// FinishStage submits the work of a stage slot the caller holds.
func (c *Client) FinishStage(ctx context.Context, claimID, slotID string, s StageSubmission) error {
	body := wire.StageDone{Body: s.Body, Confidence: s.Confidence, AgentModel: s.AgentModel, OutputSignature: s.OutputSignature}
	if s.Output != nil {
		out, err := json.Marshal(s.Output)
		if err != nil {
			return fmt.Errorf("client: encoding the stage's output: %w", err)
		}
		body.Output = out
	}
	return c.do(ctx, "POST", "/api/v1/claims/"+esc(claimID)+"/stage-slots/"+esc(slotID)+"/done", body, nil)
}

// Pipeline returns a claim's pipeline.
func (c *Client) Pipeline(ctx context.Context, claimID string) (Pipeline, error) {
	var p Pipeline
	err := c.do(ctx, "GET", "/api/v1/claims/"+esc(claimID)+"/pipeline", nil, &p)
	return p, err
}

// Consensus returns a claim's consensus record; store.ErrNotFound until
// its pipeline has written one.
func (c *Client) Consensus(ctx context.Context, claimID string) (ConsensusRecord, error) {
	var r ConsensusRecord
	err := c.do(ctx, "GET", "/api/v1/claims/"+esc(claimID)+"/consensus", nil, &r)
	return r, err
}

// ConsensusHistory lists up to limit of a claim's consensus records,
// newest first, posted or its pipeline's (GET
// /api/v1/claims/{id}/consensus/history; limit 0 is the server's default,
// 20, and it lists at most 100).
func (c *Client) ConsensusHistory(ctx context.Context, claimID string, limit int) ([]ConsensusRecord, error) {
	var out wire.Items[ConsensusRecord]
	err := c.do(ctx, "GET", "/api/v1/claims/"+esc(claimID)+"/consensus/history"+query("limit", num(limit)), nil, &out)
	return out.Items, err
}

// NewConsensus is the body of PostConsensus.
type NewConsensus = wire.NewConsensus

// PostConsensus posts a consensus record for a claim (scope
// consensus:write) and returns its ID; it becomes the claim's Consensus
// until a newer one is written.
func (c *Client) PostConsensus(ctx context.Context, claimID string, in NewConsensus) (string, error) {
	var out wire.ConsensusPosted
	err := c.do(ctx, "POST", "/api/v1/claims/"+esc(claimID)+"/consensus", in, &out)
	return out.ConsensusID, err
}

// Protocol returns one protocol's summary (GET /api/v1/protocols/{id}):
// a registered protocol, or a name claims were created under.
func (c *Client) Protocol(ctx context.Context, id string) (ProtocolSummary, error) {
	var p ProtocolSummary
	err := c.do(ctx, "GET", "/api/v1/protocols/"+esc(id), nil, &p)
	return p, err
}

// Flags lists a claim's pipeline flags, open and resolved, oldest first.
func (c *Client) Flags(ctx context.Context, claimID string) ([]Flag, error) {
	var out wire.Items[Flag]
	err := c.do(ctx, "GET", "/api/v1/claims/"+esc(claimID)+"/flags", nil, &out)
	return out.Items, err
}

// FlagResolution is a reviewer's answer to a pipeline flag, the body of
// POST .../flags/{id}/resolve: Action is prism.FlagAdvance (apply the
// layer's effect and move on) or prism.FlagRetry (open a fresh consensus
// round of the layer); Note is kept with the resolved flag, empty is not
// sent.
type FlagResolution = wire.ResolveFlag

// Flag is a pipeline flag as the Prism routes show it.
type Flag = wire.Flag

// Protocol is a deliberation protocol as the protocol routes take it.
type Protocol = wire.Protocol

// ProtocolSummary is a protocol as the protocol routes show it: its
// definition and how often claims were created under it.
type ProtocolSummary = wire.ProtocolSummary

// ResolveFlag resolves a pipeline flag (scope pipeline:review) as r says.
// A flag already resolved is store.ErrConflict; an unknown action,
// store.ErrInvalid.
func (c *Client) ResolveFlag(ctx context.Context, claimID, flagID string, r FlagResolution) error {
	return c.do(ctx, "POST", "/api/v1/claims/"+esc(claimID)+"/flags/"+esc(flagID)+"/resolve", r, nil)
}

// Protocols lists the deliberation protocols a claim may run under,
// Prism v1 included, and the names claims were created under that no one
// registered, with how often each was used.
func (c *Client) Protocols(ctx context.Context) ([]ProtocolSummary, error) {
	var out wire.Items[ProtocolSummary]
	err := c.do(ctx, "GET", "/api/v1/protocols", nil, &out)
	return out.Items, err
}

// RegisterProtocol registers (or replaces) a protocol (scope keys:admin)
// and returns it as stored; a definition that does not validate is
// store.ErrInvalid.
func (c *Client) RegisterProtocol(ctx context.Context, p Protocol) (Protocol, error) {
	var out Protocol
	err := c.do(ctx, "POST", "/api/v1/protocols", p, &out)
	return out, err
}

// Work is what GET /api/v1/jobs/work hands an agent: the slot, its claim,
// its pipeline and the context of its layer (the original's stageName,
// priorLayers and currentLayerWorkOutputs, and Agora's submissions).
type Work = wire.Work

// StageSlot is a stage slot as the Prism routes show it, with the
// original's names of two of its fields (SlotType, StructuredOutput).
type StageSlot = wire.StageSlot

// Pipeline is the view of GET /api/v1/claims/{id}/pipeline. Phase stays
// at the last phase once the pipeline is complete; CurrentPhase is the
// same under the original's name, Slots every slot of every layer.
type Pipeline = wire.Pipeline

// ConsensusRecord is a claim's consensus record: one an agent posted, or
// what its pipeline's synthesis layer wrote, with as KeyPoints the prose
// of that layer's consensus slots.
type ConsensusRecord = wire.Consensus

// PipelineLayer is one layer of a Pipeline.
type PipelineLayer = wire.PipelineLayer
