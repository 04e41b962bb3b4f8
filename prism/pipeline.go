package prism

import (
	"encoding/json"
	"maps"
	"slices"
	"time"

	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// Phase is the part of a layer that is open: its work slots, then its
// consensus slots.
type Phase string

// The phases of a layer.
const (
	PhaseWork      Phase = "work"
	PhaseConsensus Phase = "consensus"
)

// Status is a pipeline's state (docs/prism.md, "Pipeline State Machine").
type Status string

// The pipeline statuses.
const (
	StatusActive   Status = "active"
	StatusFlagged  Status = "flagged"
	StatusComplete Status = "complete"
)

// RoleConsensus is the role of every consensus slot.
const RoleConsensus = "consensus"

// Rewards credited to the ledger when a stage slot is done.
const (
	RewardWork      = 10
	RewardConsensus = 5
)

// StageSlot is one work or consensus seat of a layer of a claim's pipeline.
// A zero time is not set; the JSON carries the times as Unix milliseconds.
type StageSlot struct {
	ID      string `json:"_id"`     // the service's, "stage_" and 24 hex digits
	ClaimID string `json:"claimId"` // the claim whose pipeline holds the slot
	Layer   int    `json:"layer"`   // the Number of the slot's layer
	Phase   Phase  `json:"phase"`   // the phase of the layer the slot belongs to
	Round   int    `json:"round"`   // 1, or more after a retried consensus
	// Role is a work slot's role (a slots.Role) or, for every consensus
	// slot, RoleConsensus.
	Role string `json:"role"`
	// Status is open, taken or done (slots.Status); a taken slot whose
	// lease lapsed re-opens.
	Status slots.Status `json:"status"`
	// APIKeyID is the ID of the key that took the slot; empty while it
	// is open. A key takes at most one slot of a layer.
	APIKeyID string `json:"apiKeyId,omitempty"`
	// AgentName is the taking key's name, empty while the slot is open.
	AgentName string `json:"agentName,omitempty"`
	// AgentAvatarURL is the taking key's avatar, empty while the slot is
	// open or when the key has none.
	AgentAvatarURL string `json:"agentAvatarUrl,omitempty"`
	// TakenAt is when the slot was taken; zero while it is open.
	TakenAt time.Time `json:"-"`
	// DoneAt is when the slot's submission was recorded; zero until then.
	// A phase's slots are read in DoneAt order.
	DoneAt time.Time `json:"-"`
	// LeaseExpiresAt is when a taken slot re-opens without a done; zero
	// while it is open, once it is done, or with leases off.
	LeaseExpiresAt time.Time `json:"-"`
	// CreatedAt is when the slot's phase opened.
	CreatedAt time.Time `json:"-"`
	// Body is the submitted prose, at most MaxBodyLen bytes; empty until
	// done.
	Body string `json:"body,omitempty"`
	// Output is the submitted structured output, validated against the
	// layer's Shape where the layer takes it from this phase; nil when
	// none was given.
	Output json.RawMessage `json:"output,omitempty"`
	// Confidence is the submitted confidence, 0 to 1; always set on a done
	// consensus slot, nil where a work slot gave none.
	Confidence *float64 `json:"confidence,omitempty"`
	// AgentModel is the model the agent said it ran, OutputSignature its
	// signature of the prose; both are kept as submitted.
	AgentModel      string `json:"agentModel,omitempty"`
	OutputSignature string `json:"outputSignature,omitempty"` // see AgentModel
	// SigningKeyAddress is the signing key the agent's API key had
	// registered when it submitted a signature (identity.Key's), so the
	// signature can be checked against the key it was made with; empty
	// without a signature or a registered key.
	SigningKeyAddress string `json:"signingKeyAddress,omitempty"`
}

// FlagStatus says whether a human has dealt with a flag.
type FlagStatus string

// The flag statuses.
const (
	FlagOpen     FlagStatus = "open"
	FlagResolved FlagStatus = "resolved"
)

// FlagReasonLowConfidence is the reason of a flag raised because a layer's
// consensus fell below its threshold.
const FlagReasonLowConfidence = "low_consensus_confidence"

// Flag asks a human to review a layer whose consensus fell short.
// ResolvedAt is zero while it is open; the JSON carries the times as Unix
// milliseconds.
type Flag struct {
	ID      string `json:"_id"`     // the service's, "flag_" and 24 hex digits
	ClaimID string `json:"claimId"` // the claim whose pipeline raised it
	Layer   int    `json:"layer"`   // the Number of the layer that fell short
	Reason  string `json:"reason"`  // FlagReasonLowConfidence
	// AvgConfidence is the consensus round's average confidence, 0 to 1,
	// below Threshold.
	AvgConfidence float64 `json:"avgConfidence"`
	// Threshold is the layer's threshold when the flag was raised.
	Threshold float64 `json:"threshold"`
	// Status is FlagOpen until a reviewer resolves the flag.
	Status FlagStatus `json:"status"`
	// Action is the reviewer's FlagAction ("advance" or "retry"); empty
	// while the flag is open.
	Action string `json:"action,omitempty"`
	// Note is the reviewer's note, trimmed; empty when none was given.
	Note string `json:"note,omitempty"`
	// ResolvedBy is the ID of the reviewer's API key; empty while the flag
	// is open.
	ResolvedBy string `json:"resolvedBy,omitempty"`
	// CreatedAt is when the flag was raised.
	CreatedAt time.Time `json:"-"`
	// ResolvedAt is when a reviewer resolved the flag.
	ResolvedAt time.Time `json:"-"`
}

// Pipeline is a claim's way through its protocol: one aggregate, changed
// as a whole and saved with compare-and-set on Version, so that every
// transition happens exactly once however many agents finish together.
// Its JSON, the form the backends store it in, carries the times as Unix
// milliseconds.
type Pipeline struct {
	// ClaimID is the claim the pipeline belongs to, one pipeline per
	// claim: the key it is stored and remembered by.
	ClaimID string `json:"claimId"`
	Domain  string `json:"domain"` // the claim's, kept here for the work index
	// Protocol is the pipeline's own copy of the protocol it runs, taken
	// when it started or was routed: registering the protocol anew does
	// not change it.
	Protocol Protocol `json:"protocol"`
	// Status is active, flagged while an open flag holds the current
	// layer, or complete after the last layer passed.
	Status Status `json:"status"`
	// CurrentLayer is the Number of the layer being run; the last layer's
	// once the pipeline is complete.
	CurrentLayer int `json:"currentLayer"`
	// Phase is the open phase of the current layer; empty once the
	// pipeline is complete.
	Phase Phase `json:"phase"`
	Round int   `json:"round"` // consensus round of the current layer
	// Slots holds every stage slot opened, of every layer, phase and
	// round, in the order they were opened.
	Slots []StageSlot `json:"slots"`
	// Flags holds every flag raised, open and resolved, oldest first.
	Flags    []Flag          `json:"flags"`
	Averages map[int]float64 `json:"averages,omitempty"` // layer -> last consensus average
	// Consensus is the claim's consensus record, written when a
	// consensus or summary layer passes; nil until then.
	Consensus *ConsensusRecord `json:"consensus,omitempty"`
	// Version is 1 when the pipeline is created and rises by exactly one
	// with every saved change; the store compares it to save.
	Version int64 `json:"version"`
	// CreatedAt is when the pipeline was created, with its claim, UTC to
	// the millisecond; zero for one stored before it was kept.
	CreatedAt time.Time `json:"-"`
	// UpdatedAt is when the service made the pipeline's last change, UTC
	// to the millisecond: when it completed, once complete.
	UpdatedAt time.Time `json:"-"`
}

// Layer returns the pipeline's current layer.
func (p *Pipeline) Layer() Layer { return p.Protocol.Layers[p.CurrentLayer-p.Protocol.First()] }

// slot returns the slot with ID id, or nil.
func (p *Pipeline) slot(id string) *StageSlot {
	for i := range p.Slots {
		if p.Slots[i].ID == id {
			return &p.Slots[i]
		}
	}
	return nil
}

// Clone returns a deep copy, so a failed transition leaves the original.
func (p Pipeline) Clone() Pipeline {
	p.Protocol = p.Protocol.Clone()
	p.Slots = slices.Clone(p.Slots)
	for i := range p.Slots {
		s := &p.Slots[i]
		s.Output = slices.Clone(s.Output)
		if s.Confidence != nil {
			c := *s.Confidence
			s.Confidence = &c
		}
	}
	p.Flags = slices.Clone(p.Flags)
	if p.Averages != nil {
		p.Averages = maps.Clone(p.Averages)
	}
	if p.Consensus != nil {
		c := p.Consensus.Clone()
		p.Consensus = &c
	}
	return p
}

// Clone returns a deep copy.
func (p Protocol) Clone() Protocol {
	p.Layers = slices.Clone(p.Layers)
	for i := range p.Layers {
		l := &p.Layers[i]
		l.WorkRoles = slices.Clone(l.WorkRoles)
		if l.Output != nil {
			out := make(Shape, len(l.Output))
			for k, f := range l.Output {
				f.Values = slices.Clone(f.Values)
				out[k] = f
			}
			l.Output = out
		}
	}
	return p
}

// The errors of this package.
var (
	ErrPipelineNotFound = &store.Error{Kind: store.ErrNotFound, Code: "pipeline_not_found", Message: "this claim has no pipeline"}
	ErrPipelineExists   = &store.Error{Kind: store.ErrConflict, Code: "pipeline_exists", Message: "this claim already has a pipeline"}
	ErrVersionConflict  = &store.Error{Kind: store.ErrConflict, Code: "version_conflict", Message: "the pipeline changed concurrently"}
	ErrProtocolNotFound = &store.Error{Kind: store.ErrNotFound, Code: "protocol_not_found", Message: "protocol not found"}
	ErrFlagNotFound     = &store.Error{Kind: store.ErrNotFound, Code: "flag_not_found", Message: "flag not found"}
	ErrFlagResolved     = &store.Error{Kind: store.ErrConflict, Code: "flag_resolved", Message: "the flag is already resolved"}
	ErrNotActive        = &store.Error{Kind: store.ErrConflict, Code: "pipeline_not_active", Message: "the pipeline is not active"}
	ErrLayerHeld        = &store.Error{Kind: store.ErrConflict, Code: "layer_held", Message: "this agent already holds a slot in this layer"}
	ErrBadConfidence    = &store.Error{Kind: store.ErrInvalid, Code: "invalid_confidence", Message: "confidence must be a number from 0 to 1"}
)
