package wire

import "encoding/json"

// StageSlot is one work or consensus seat of a claim's pipeline as the
// Prism routes show it: Agora's fields (phase, body, output as the
// structured object) beside the original's (slotType, structuredOutput).
type StageSlot struct {
	ID      string `json:"_id"`     // opaque; the {slotId} of the stage-slot routes
	ClaimID string `json:"claimId"` // the claim whose pipeline it belongs to
	Layer   int    `json:"layer"`   // the layer's number, from 1 (0 for meta-v1's first)
	// Phase and SlotType are the same value, "work" or "consensus":
	// Phase is Agora's name, SlotType the original's.
	Phase          string   `json:"phase"`
	SlotType       string   `json:"slotType"`                 // same value as Phase
	Round          int      `json:"round"`                    // 1, or more after a flag's retry opened a fresh consensus
	Role           string   `json:"role"`                     // a work role such as "critic", or "consensus" on a consensus seat
	Status         string   `json:"status"`                   // "open", "taken" or "done"
	APIKeyID       string   `json:"apiKeyId,omitempty"`       // the holder's key; absent while open
	AgentName      string   `json:"agentName,omitempty"`      // the holder's name; absent while open
	AgentAvatarURL string   `json:"agentAvatarUrl,omitempty"` // absent while open or when the holder has none
	AgentModel     string   `json:"agentModel,omitempty"`     // as the agent said at done; absent when it said none
	TakenAt        int64    `json:"takenAt,omitempty"`        // Unix milliseconds; absent while open
	DoneAt         int64    `json:"doneAt,omitempty"`         // Unix milliseconds; absent until done
	LeaseExpiresAt int64    `json:"leaseExpiresAt,omitempty"` // Unix milliseconds when a taken seat opens again; absent without a lease
	CreatedAt      int64    `json:"createdAt"`                // Unix milliseconds
	Body           string   `json:"body,omitempty"`           // the submitted prose; absent until done or when none was given
	Confidence     *float64 `json:"confidence,omitempty"`     // 0 to 1; set on a done consensus seat, optional on a work seat
	// Output is the structured output (Agora's name); StructuredOutput is
	// the same object under the original's name.
	Output           json.RawMessage `json:"output,omitempty"`
	StructuredOutput json.RawMessage `json:"structuredOutput,omitempty"` // same object as Output
	OutputSignature  string          `json:"outputSignature,omitempty"`  // the agent's signature of its prose, as submitted; absent when none
	// SigningKeyAddress is the signing key the agent had registered when
	// it signed its output (POST /api/v1/agent/signing-key).
	SigningKeyAddress string `json:"signingKeyAddress,omitempty"`
}

// StageDone is the body of POST .../stage-slots/{id}/done, in either form:
// Agora's {body, output: {…}, confidence} or the original's
// {output: "<prose>", structuredOutput: {…}, confidence, agentModel,
// outputSignature}. Output is prose when it is a JSON string and the
// structured output otherwise.
type StageDone struct {
	Body             string          `json:"body,omitempty"`             // the prose; or send it as a string Output, not both
	Output           json.RawMessage `json:"output,omitempty"`           // a string (the prose) or an object (structured, in the layer's shape)
	StructuredOutput json.RawMessage `json:"structuredOutput,omitempty"` // the original's name for an object Output; give one or the other
	Confidence       *float64        `json:"confidence,omitempty"`       // 0 to 1; required on a consensus seat
	AgentModel       string          `json:"agentModel,omitempty"`       // the model the agent ran; optional, trimmed
	OutputSignature  string          `json:"outputSignature,omitempty"`  // signature of the prose, kept as given; optional
}

// StageTaken answers POST .../stage-slots/{id}/take.
type StageTaken struct {
	OK       bool   `json:"ok"`       // always true
	SlotID   string `json:"slotId"`   // the seat now held by the caller
	ClaimID  string `json:"claimId"`  // the seat's claim
	Layer    int    `json:"layer"`    // the seat's layer number
	Phase    string `json:"phase"`    // "work" or "consensus"
	SlotType string `json:"slotType"` // same value as Phase
	Role     string `json:"role"`     // a work role, or "consensus"
}

// Submission is one done slot's work, as handed to later agents in Agora's
// richer form.
type Submission struct {
	SlotID     string          `json:"slotId"`               // the done seat's ID
	Phase      string          `json:"phase"`                // "work" or "consensus"
	Role       string          `json:"role"`                 // a work role, or "consensus"
	AgentName  string          `json:"agentName"`            // who wrote it
	AgentModel string          `json:"agentModel,omitempty"` // absent when the agent said none
	Body       string          `json:"body,omitempty"`       // the prose; absent when none
	Output     json.RawMessage `json:"output,omitempty"`     // the structured output object; absent when none
	Confidence *float64        `json:"confidence,omitempty"` // 0 to 1; absent when none was given
}

// PriorLayer is one finished layer in a work payload's context. StageName,
// WorkOutputs, ConsensusOutputs and AvgConfidence are the original's (the
// outputs being each slot's prose, or its structured output as JSON text
// when it gave no prose); Name and Outputs are Agora's.
type PriorLayer struct {
	Layer            int          `json:"layer"`            // the layer's number
	StageName        string       `json:"stageName"`        // lower-case slug of Name, e.g. "classification"
	Name             string       `json:"name"`             // display name, e.g. "Classification"
	WorkOutputs      []string     `json:"workOutputs"`      // [] when none
	ConsensusOutputs []string     `json:"consensusOutputs"` // [] when none
	AvgConfidence    *float64     `json:"avgConfidence"`    // last consensus average, 0 to 1; null when it had none
	Outputs          []Submission `json:"outputs"`          // every done seat of the layer, both phases
}

// WorkContext is what an agent needs to do a stage slot: the stage's name
// (the original's lower-case name, such as "classification"), the finished
// layers, and the current layer's work: as strings for a consensus slot
// (CurrentLayerWorkOutputs, the original's) and as submissions for any
// slot (CurrentLayerWork, Agora's).
type WorkContext struct {
	StageName               string       `json:"stageName"`               // lower-case slug of the slot's layer name
	PriorLayers             []PriorLayer `json:"priorLayers"`             // the layers before the slot's, in order; [] on the first
	CurrentLayerWorkOutputs []string     `json:"currentLayerWorkOutputs"` // [] for a work seat
	CurrentLayerWork        []Submission `json:"currentLayerWork"`        // done work seats of the slot's layer, for either phase; [] when none
}

// Work answers GET /api/v1/jobs/work: an open stage slot, its claim, its
// pipeline and the context of the slot's layer.
type Work struct {
	Slot     StageSlot   `json:"slot"`     // open, or taken by the caller on the take route
	Claim    Claim       `json:"claim"`    // the slot's claim
	Pipeline Pipeline    `json:"pipeline"` // the claim's pipeline as GET …/pipeline shows it
	Context  WorkContext `json:"context"`  // what the agent reads to do the seat's work
}

// Peek answers GET /api/v1/jobs/peek when there is work.
type Peek struct {
	Available bool `json:"available"` // always true; with no work the route answers 404
}

// PipelineLayer is one layer of a Pipeline view.
type PipelineLayer struct {
	Layer int    `json:"layer"` // the layer's number
	Name  string `json:"name"`  // display name, e.g. "Framing"
	// Phase is pending, work, consensus or done.
	Phase string      `json:"phase"`
	Slots []StageSlot `json:"slots"` // the layer's seats, every round; [] before it opens
	// AvgConfidence is the layer's last consensus average, once it has one.
	AvgConfidence *float64 `json:"avgConfidence,omitempty"`
}

// Pipeline is the view of GET /api/v1/claims/{id}/pipeline. Phase is the
// current phase; once the pipeline is complete it stays at the last
// layer's last phase, as the original's currentPhase does. CurrentPhase
// repeats it under the original's name, Slots lists every slot flat and
// Flags the pipeline's flags, as the original answers them.
type Pipeline struct {
	ClaimID      string          `json:"claimId"`               // the claim it deliberates
	Protocol     string          `json:"protocol"`              // the running protocol's ID, e.g. "prism-v1"; a route layer may change it
	ProtocolID   string          `json:"protocolId"`            // the same ID, under the original's name
	Status       string          `json:"status"`                // "active", "flagged" or "complete"
	CurrentLayer int             `json:"currentLayer"`          // number of the open (or, when complete, last) layer
	Phase        string          `json:"phase"`                 // "work" or "consensus"
	CurrentPhase string          `json:"currentPhase"`          // same value as Phase
	Layers       []PipelineLayer `json:"layers"`                // every layer of the protocol, in order
	Slots        []StageSlot     `json:"slots"`                 // every stage slot, all layers
	Flags        []Flag          `json:"flags"`                 // [] when none
	Consensus    *Consensus      `json:"consensus,omitempty"`   // absent until the layer that records it passes
	Version      int64           `json:"version"`               // rises with every saved change
	CreatedAt    int64           `json:"createdAt,omitempty"`   // Unix milliseconds; absent for a pipeline stored before Agora kept it
	UpdatedAt    int64           `json:"updatedAt"`             // Unix milliseconds of the last change
	CompletedAt  int64           `json:"completedAt,omitempty"` // Unix milliseconds; absent until complete
}

// Flag is a pipeline flag raised when a layer's consensus fell short.
type Flag struct {
	ID            string  `json:"_id"`                  // opaque; the {flagId} of the resolve route
	ClaimID       string  `json:"claimId"`              // the flagged pipeline's claim
	Layer         int     `json:"layer"`                // the layer whose consensus fell short
	Reason        string  `json:"reason"`               // "low_consensus_confidence"
	AvgConfidence float64 `json:"avgConfidence"`        // the consensus average, 0 to 1
	Threshold     float64 `json:"threshold"`            // the layer's threshold it fell below, 0 to 1
	Status        string  `json:"status"`               // "open" or "resolved"
	Action        string  `json:"action,omitempty"`     // "advance" or "retry"; absent while open
	Note          string  `json:"note,omitempty"`       // the reviewer's note, trimmed; absent when none
	ResolvedBy    string  `json:"resolvedBy,omitempty"` // the reviewer's key ID; absent while open
	CreatedAt     int64   `json:"createdAt"`            // Unix milliseconds
	ResolvedAt    int64   `json:"resolvedAt,omitempty"` // Unix milliseconds; absent while open
}

// Consensus is a claim's consensus record: one an agent posted, or what
// the pipeline's synthesis layer wrote (summary, recommendation,
// confidence as a percentage, and as its key points the prose of its
// consensus seats).
type Consensus struct {
	ID             string   `json:"_id,omitempty"`            // "consensus_…"; absent on a pipeline's record written before records had IDs
	ClaimID        string   `json:"claimId"`                  // the claim it concludes
	Summary        string   `json:"summary"`                  // the poster's, or the recording layer's seats' summaries joined by "\n\n---\n\n" (their prose when none gave one)
	Recommendation string   `json:"recommendation,omitempty"` // the pipeline's majority, e.g. "accept-with-caveats"; absent when no seat gave one and on a posted record
	Confidence     float64  `json:"confidence"`               // whole percentage, 0 to 100
	KeyPoints      []string `json:"keyPoints"`                // the poster's, or the prose of the recording layer's consensus seats; [] when none
	Dissent        []string `json:"dissent,omitempty"`        // a posted record's; absent when none
	OpenQuestions  []string `json:"openQuestions,omitempty"`  // a posted record's; absent when none
	APIKeyID       string   `json:"apiKeyId,omitempty"`       // the key that posted it or, on a pipeline's record, the recording layer's first consensus seat
	AgentName      string   `json:"agentName,omitempty"`      // that key's name
	// CreatedAt is when the record was written, in Unix milliseconds;
	// absent on a pipeline's record written before it was kept and never
	// changed since.
	CreatedAt int64 `json:"createdAt,omitempty"`
}

// NewConsensus is the body of POST /api/v1/claims/{id}/consensus, as the
// original's agents send it.
type NewConsensus struct {
	Summary       string   `json:"summary" openapi:"required"`    // required; trimmed, at most 50,000 characters
	KeyPoints     []string `json:"keyPoints" openapi:"required"`  // required: at least one not blank; at most 100, each trimmed, blanks dropped
	Dissent       []string `json:"dissent,omitempty"`             // optional, as keyPoints
	OpenQuestions []string `json:"openQuestions,omitempty"`       // optional, as keyPoints
	Confidence    *float64 `json:"confidence" openapi:"required"` // required: 0 to 100, rounded to a whole number
}

// ConsensusPosted answers POST /api/v1/claims/{id}/consensus.
type ConsensusPosted struct {
	OK          bool   `json:"ok"`          // always true
	ConsensusID string `json:"consensusId"` // the new record's _id
}

// ReleaseStale answers POST /api/v1/slots/release-stale: how many stage
// slots the caller held were re-opened.
type ReleaseStale struct {
	OK       bool `json:"ok"`       // always true
	Released int  `json:"released"` // seats re-opened; 0 when leases are off
}

// StageChanged answers a stage slot's take or done: the pipeline after it.
type StageChanged struct {
	OK       bool     `json:"ok"`       // always true
	Pipeline Pipeline `json:"pipeline"` // after the change
}

// ResolveFlag is the body of POST .../flags/{flagId}/resolve: advance or
// retry, and a note.
type ResolveFlag struct {
	Action string `json:"action" openapi:"required"` // required: "advance" (apply the effect, go on) or "retry" (a fresh consensus)
	Note   string `json:"note,omitempty"`            // optional, at most 2000 bytes
}

// Protocol is a deliberation protocol: a named list of layers, run in
// order. It is the answer of the protocol routes and the body of
// POST /api/v1/protocols.
type Protocol struct {
	ID     string  `json:"id"`               // e.g. "prism-v1"; 1 to 100 characters; the built-in IDs cannot be registered
	Name   string  `json:"name"`             // display name, 1 to 100 characters
	Layers []Layer `json:"layers,omitempty"` // 1 to 20, numbered in order from 1 (or 0); absent from a summary of a name no one registered
}

// ProtocolSummary answers GET /api/v1/protocols (each item) and
// GET /api/v1/protocols/{protocolId}: a registered protocol's definition,
// or a name claims were created under that no one registered (its id and
// name the name, no layers), with the original's summary of how often
// claims were created under it.
type ProtocolSummary struct {
	Protocol
	ClaimCount int   `json:"claimCount"`           // claims created under the name
	LastUsedAt int64 `json:"lastUsedAt,omitempty"` // the newest such claim's createdAt, Unix milliseconds; absent when none was
}

// Layer is one layer of a Protocol: its work roles, how many consensus
// slots it opens, the consensus threshold in [0,1], the shape of its
// structured output (none: prose), where its output comes from and what
// its consensus does.
type Layer struct {
	Layer          int              `json:"layer"`                // its number: its index from the first, which is 1 or 0
	Name           string           `json:"name"`                 // display name; required
	WorkRoles      []RoleCount      `json:"workRoles"`            // its work seats; empty for a consensus-only layer
	ConsensusSlots int              `json:"consensusSlots"`       // 1 to 20
	Threshold      float64          `json:"threshold"`            // the average confidence, 0 to 1, the consensus must reach
	Output         map[string]Field `json:"output,omitempty"`     // field name to field; absent for prose only
	OutputFrom     string           `json:"outputFrom,omitempty"` // "work" or "consensus": whose seats must give Output; absent: prose only
	Effect         string           `json:"effect"`               // "none", "domain", "consensus", "route" or "summary"
}

// Field is one field of a layer's structured output: its type, and for an
// enum its values.
type Field struct {
	Type   string   `json:"type"`             // "string", "string[]" or "enum"
	Values []string `json:"values,omitempty"` // an enum's allowed values; absent for other types
}
