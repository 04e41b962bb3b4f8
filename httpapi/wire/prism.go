package wire

import "encoding/json"

// StageSlot is one work or consensus seat of a claim's pipeline as the
// Prism routes show it: Agora's fields (phase, body, output as the
// structured object) beside the original's (slotType, structuredOutput).
type StageSlot struct {
	ID      string `json:"_id"`
	ClaimID string `json:"claimId"`
	Layer   int    `json:"layer"`
	// Phase and SlotType are the same value, "work" or "consensus":
	// Phase is Agora's name, SlotType the original's.
	Phase          string   `json:"phase"`
	SlotType       string   `json:"slotType"`
	Round          int      `json:"round"`
	Role           string   `json:"role"`
	Status         string   `json:"status"`
	APIKeyID       string   `json:"apiKeyId,omitempty"`
	AgentName      string   `json:"agentName,omitempty"`
	AgentAvatarURL string   `json:"agentAvatarUrl,omitempty"`
	AgentModel     string   `json:"agentModel,omitempty"`
	TakenAt        int64    `json:"takenAt,omitempty"`
	DoneAt         int64    `json:"doneAt,omitempty"`
	LeaseExpiresAt int64    `json:"leaseExpiresAt,omitempty"`
	CreatedAt      int64    `json:"createdAt"`
	Body           string   `json:"body,omitempty"`
	Confidence     *float64 `json:"confidence,omitempty"`
	// Output is the structured output (Agora's name); StructuredOutput is
	// the same object under the original's name.
	Output           json.RawMessage `json:"output,omitempty"`
	StructuredOutput json.RawMessage `json:"structuredOutput,omitempty"`
	OutputSignature  string          `json:"outputSignature,omitempty"`
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
	Body             string          `json:"body,omitempty"`
	Output           json.RawMessage `json:"output,omitempty"`
	StructuredOutput json.RawMessage `json:"structuredOutput,omitempty"`
	Confidence       *float64        `json:"confidence,omitempty"`
	AgentModel       string          `json:"agentModel,omitempty"`
	OutputSignature  string          `json:"outputSignature,omitempty"`
}

// StageTaken answers POST .../stage-slots/{id}/take.
type StageTaken struct {
	OK       bool   `json:"ok"`
	SlotID   string `json:"slotId"`
	ClaimID  string `json:"claimId"`
	Layer    int    `json:"layer"`
	Phase    string `json:"phase"`
	SlotType string `json:"slotType"`
	Role     string `json:"role"`
}

// Submission is one done slot's work, as handed to later agents in Agora's
// richer form.
type Submission struct {
	SlotID     string          `json:"slotId"`
	Phase      string          `json:"phase"`
	Role       string          `json:"role"`
	AgentName  string          `json:"agentName"`
	AgentModel string          `json:"agentModel,omitempty"`
	Body       string          `json:"body,omitempty"`
	Output     json.RawMessage `json:"output,omitempty"`
	Confidence *float64        `json:"confidence,omitempty"`
}

// PriorLayer is one finished layer in a work payload's context. StageName,
// WorkOutputs, ConsensusOutputs and AvgConfidence are the original's (the
// outputs being each slot's prose, or its structured output as JSON text
// when it gave no prose); Name and Outputs are Agora's.
type PriorLayer struct {
	Layer            int          `json:"layer"`
	StageName        string       `json:"stageName"`
	Name             string       `json:"name"`
	WorkOutputs      []string     `json:"workOutputs"`
	ConsensusOutputs []string     `json:"consensusOutputs"`
	AvgConfidence    *float64     `json:"avgConfidence"`
	Outputs          []Submission `json:"outputs"`
}

// WorkContext is what an agent needs to do a stage slot: the stage's name
// (the original's lower-case name, such as "classification"), the finished
// layers, and for a consensus slot the current layer's work, as strings
// (CurrentLayerWorkOutputs, the original's) and as submissions
// (CurrentLayerWork, Agora's).
type WorkContext struct {
	StageName               string       `json:"stageName"`
	PriorLayers             []PriorLayer `json:"priorLayers"`
	CurrentLayerWorkOutputs []string     `json:"currentLayerWorkOutputs"`
	CurrentLayerWork        []Submission `json:"currentLayerWork"`
}

// Work answers GET /api/v1/jobs/work: an open stage slot, its claim, its
// pipeline and the context of the slot's layer.
type Work struct {
	Slot     StageSlot   `json:"slot"`
	Claim    Claim       `json:"claim"`
	Pipeline Pipeline    `json:"pipeline"`
	Context  WorkContext `json:"context"`
}

// Peek answers GET /api/v1/jobs/peek when there is work.
type Peek struct {
	Available bool `json:"available"`
}

// PipelineLayer is one layer of a Pipeline view.
type PipelineLayer struct {
	Layer int    `json:"layer"`
	Name  string `json:"name"`
	// Phase is pending, work, consensus or done.
	Phase string      `json:"phase"`
	Slots []StageSlot `json:"slots"`
	// AvgConfidence is the layer's last consensus average, once it has one.
	AvgConfidence *float64 `json:"avgConfidence,omitempty"`
}

// Pipeline is the view of GET /api/v1/claims/{id}/pipeline. Phase is the
// current phase; once the pipeline is complete it stays at the last
// layer's last phase, as the original's currentPhase does. CurrentPhase
// repeats it under the original's name, Slots lists every slot flat and
// Flags the pipeline's flags, as the original answers them.
type Pipeline struct {
	ClaimID      string          `json:"claimId"`
	Protocol     string          `json:"protocol"`
	Status       string          `json:"status"`
	CurrentLayer int             `json:"currentLayer"`
	Phase        string          `json:"phase"`
	CurrentPhase string          `json:"currentPhase"`
	Layers       []PipelineLayer `json:"layers"`
	Slots        []StageSlot     `json:"slots"`
	Flags        []Flag          `json:"flags"`
	Consensus    *Consensus      `json:"consensus,omitempty"`
	Version      int64           `json:"version"`
}

// Flag is a pipeline flag raised when a layer's consensus fell short.
type Flag struct {
	ID            string  `json:"_id"`
	ClaimID       string  `json:"claimId"`
	Layer         int     `json:"layer"`
	Reason        string  `json:"reason"`
	AvgConfidence float64 `json:"avgConfidence"`
	Threshold     float64 `json:"threshold"`
	Status        string  `json:"status"`
	Action        string  `json:"action,omitempty"`
	Note          string  `json:"note,omitempty"`
	ResolvedBy    string  `json:"resolvedBy,omitempty"`
	CreatedAt     int64   `json:"createdAt"`
	ResolvedAt    int64   `json:"resolvedAt,omitempty"`
}

// Consensus is a claim's consensus record: what the synthesis layer wrote
// (summary, recommendation, confidence as a percentage) and, as the
// original's keyPoints, the prose of its consensus slots.
type Consensus struct {
	ClaimID        string   `json:"claimId"`
	Summary        string   `json:"summary"`
	Recommendation string   `json:"recommendation,omitempty"`
	Confidence     float64  `json:"confidence"`
	KeyPoints      []string `json:"keyPoints"`
}

// ReleaseStale answers POST /api/v1/slots/release-stale: how many stage
// slots the caller held were re-opened.
type ReleaseStale struct {
	OK       bool `json:"ok"`
	Released int  `json:"released"`
}

// StageChanged answers a stage slot's take or done: the pipeline after it.
type StageChanged struct {
	OK       bool     `json:"ok"`
	Pipeline Pipeline `json:"pipeline"`
}

// ConsensusList answers GET /api/v1/claims/{id}/consensus/history, as the
// original's paged lists answer: {"items": [...], "nextCursor": null}.
type ConsensusList struct {
	Items      []Consensus `json:"items"`
	NextCursor *string     `json:"nextCursor"`
}

// ResolveFlag is the body of POST .../flags/{flagId}/resolve: accept,
// reject or rerun, and a note.
type ResolveFlag struct {
	Action string `json:"action" openapi:"required"`
	Note   string `json:"note,omitempty"`
}

// Protocol is a deliberation protocol: a named list of layers, run in
// order. It is the answer of the protocol routes and the body of
// POST /api/v1/protocols.
type Protocol struct {
	ID     string  `json:"id"`
	Name   string  `json:"name"`
	Layers []Layer `json:"layers"`
}

// Layer is one layer of a Protocol: its work roles, how many consensus
// slots it opens, the consensus threshold in [0,1], the shape of its
// structured output (none: prose), where its output comes from and what
// its consensus does.
type Layer struct {
	Layer          int              `json:"layer"`
	Name           string           `json:"name"`
	WorkRoles      []RoleCount      `json:"workRoles"`
	ConsensusSlots int              `json:"consensusSlots"`
	Threshold      float64          `json:"threshold"`
	Output         map[string]Field `json:"output,omitempty"`
	OutputFrom     string           `json:"outputFrom,omitempty"`
	Effect         string           `json:"effect"`
}

// Field is one field of a layer's structured output: its type, and for an
// enum its values.
type Field struct {
	Type   string   `json:"type"`
	Values []string `json:"values,omitempty"`
}
