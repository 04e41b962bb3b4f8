package prism

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// Effect is what a layer does when its consensus passes.
type Effect string

// The layer effects of docs/prism.md, and those of AOP's other protocols.
const (
	EffectNone      Effect = "none"      // the pipeline just advances
	EffectDomain    Effect = "domain"    // write the majority-voted domain slug to the claim
	EffectConsensus Effect = "consensus" // write the claim's consensus record
	// EffectRoute (meta-v1's meta-classify) writes the majority-voted
	// domain to the claim and moves the pipeline to the majority-voted
	// protocol (the layer's "protocol" enum names those it may choose),
	// which goes on from its first layer. A route layer is its protocol's
	// last.
	EffectRoute Effect = "route"
	// EffectSummary (lens-v1's summary) writes the claim's consensus record
	// without a verdict: the summaries its consensus slots gave (their
	// prose when none did) and a recommendation only when some gave one.
	EffectSummary Effect = "summary"
)

// needsOutput reports whether every slot the layer takes output from must
// submit it: the effect cannot do without.
func (e Effect) needsOutput() bool {
	return e == EffectDomain || e == EffectConsensus || e == EffectRoute
}

// loose reports whether a layer with the effect takes its structured
// output as any JSON object, reading the shape's fields where given: a
// summary layer's agents are told nothing of its shape, and AOP accepts
// whatever they add.
func (e Effect) loose() bool { return e == EffectSummary }

// Records reports whether the effect writes the claim's consensus record.
func (e Effect) Records() bool { return e == EffectConsensus || e == EffectSummary }

// OutputFrom says which slots of a layer must submit structured output.
type OutputFrom string

// Who submits a layer's structured output.
const (
	OutputNone      OutputFrom = ""          // prose only
	OutputWork      OutputFrom = "work"      // every work slot
	OutputConsensus OutputFrom = "consensus" // every consensus slot
)

// Layer is one stage of a protocol.
type Layer struct {
	// Number is the layer's place in its protocol: layers are numbered
	// in order from Protocol.First, 1 (or 0).
	Number int `json:"layer"`
	// Name names the layer for people; it must not be blank.
	Name string `json:"name"`
	// WorkRoles says how many work slots of each role the layer opens;
	// empty, the layer has no work phase and opens with its consensus.
	WorkRoles []slots.RoleCount `json:"workRoles"`
	// ConsensusSlots is how many consensus slots each consensus round
	// opens, 1 to MaxSlotsPerPhase.
	ConsensusSlots int     `json:"consensusSlots"`
	Threshold      float64 `json:"threshold"` // in [0,1]
	// Output is the shape of the structured output OutputFrom's slots
	// submit; nil when the layer takes prose only.
	Output Shape `json:"output,omitempty"`
	// OutputFrom says which phase's slots submit Output; OutputNone
	// without a shape.
	OutputFrom OutputFrom `json:"outputFrom,omitempty"`
	// Effect is what the layer does when its consensus passes.
	Effect Effect `json:"effect"`
}

// WorkSlots returns how many work slots the layer opens.
func (l Layer) WorkSlots() int {
	n := 0
	for _, rc := range l.WorkRoles {
		n += rc.Count
	}
	return n
}

// Protocol is a named list of layers, run in order.
type Protocol struct {
	// ID is what claims and routes name the protocol by, 1 to
	// MaxProtocolNameLen bytes; registering a built-in one's is refused.
	ID string `json:"id"`
	// Name names the protocol for people, 1 to MaxProtocolNameLen bytes.
	Name string `json:"name"`
	// Layers are the protocol's 1 to MaxLayers layers, in the order they
	// run.
	Layers []Layer `json:"layers"`
}

// Limits on a protocol definition.
const (
	MaxLayers          = 20
	MaxSlotsPerPhase   = slots.MaxSlotsPerConfigure
	MaxProtocolNameLen = 100
)

// First returns the number of the protocol's first layer: 1, or 0 for a
// protocol that starts with a layer 0 (meta-v1).
func (p Protocol) First() int {
	if len(p.Layers) == 0 {
		return 1
	}
	return p.Layers[0].Number
}

// Last returns the number of the protocol's last layer.
func (p Protocol) Last() int { return p.First() + len(p.Layers) - 1 }

// Layer returns the layer numbered n, and whether there is one.
func (p Protocol) Layer(n int) (Layer, bool) {
	i := n - p.First()
	if i < 0 || i >= len(p.Layers) {
		return Layer{}, false
	}
	return p.Layers[i], true
}

// Validate checks a protocol definition: a name, 1 to MaxLayers layers
// numbered in order from 1 (or from 0, as meta-v1's meta-classify), each
// with roles of slots or of the pipelines (PipelineRoles), 1 to
// MaxSlotsPerPhase slots per phase, a threshold in [0,1], a well-formed
// output shape when one is required, and a known effect (a domain effect
// needs a shape with a "domain" string, a consensus effect one with
// "summary" and "recommendation", a summary effect one with "summary", a
// route effect one with a "protocol" enum and a "domain" string, on the
// last layer).
func (p Protocol) Validate() error {
	bad := func(format string, args ...any) error {
		return store.Errorf(store.ErrInvalid, "invalid_protocol", "protocol %q: "+format, append([]any{p.ID}, args...)...)
	}
	if strings.TrimSpace(p.ID) == "" || len(p.ID) > MaxProtocolNameLen || strings.TrimSpace(p.Name) == "" || len(p.Name) > MaxProtocolNameLen ||
		!storableText(p.ID) || !storableText(p.Name) {
		return store.Errorf(store.ErrInvalid, "invalid_protocol", "a protocol needs an id and a name of 1 to %d characters of UTF-8 text without NUL", MaxProtocolNameLen)
	}
	if len(p.Layers) < 1 || len(p.Layers) > MaxLayers {
		return bad("needs 1 to %d layers", MaxLayers)
	}
	first := p.Layers[0].Number
	if first != 0 && first != 1 {
		return bad("the first layer is numbered %d; layers are numbered from 1 (or 0)", first)
	}
	for i, l := range p.Layers {
		if l.Number != first+i {
			return bad("layer %d is numbered %d", first+i, l.Number)
		}
		if strings.TrimSpace(l.Name) == "" {
			return bad("layer %d has no name", l.Number)
		}
		if !storableText(l.Name) {
			return bad("layer %d: its name must be UTF-8 text without NUL", l.Number)
		}
		if err := validateRoles(l.WorkRoles); err != nil {
			return bad("layer %d: %v", l.Number, err)
		}
		if l.ConsensusSlots < 1 || l.ConsensusSlots > MaxSlotsPerPhase {
			return bad("layer %d needs 1 to %d consensus slots", l.Number, MaxSlotsPerPhase)
		}
		if !(l.Threshold >= 0 && l.Threshold <= 1) {
			return bad("layer %d threshold must be in [0,1]", l.Number)
		}
		switch l.OutputFrom {
		case OutputNone:
			if len(l.Output) != 0 {
				return bad("layer %d has an output shape but no outputFrom", l.Number)
			}
		case OutputWork:
			if l.WorkSlots() == 0 {
				return bad("layer %d takes output from work slots but has none", l.Number)
			}
		case OutputConsensus:
		default:
			return bad("layer %d outputFrom must be work or consensus", l.Number)
		}
		if l.OutputFrom != OutputNone {
			if err := l.Output.check(); err != nil {
				return bad("layer %d: %v", l.Number, err)
			}
		}
		switch l.Effect {
		case EffectNone:
		case EffectDomain:
			if l.Output["domain"].Type != TypeString {
				return bad("layer %d writes the domain, so its output needs a domain string", l.Number)
			}
		case EffectConsensus:
			if l.Output["summary"].Type != TypeString || l.Output["recommendation"].Type != TypeEnum {
				return bad("layer %d writes the consensus, so its output needs a summary string and a recommendation enum", l.Number)
			}
		case EffectSummary:
			if l.OutputFrom != OutputConsensus || l.Output["summary"].Type != TypeString {
				return bad("layer %d writes a summary, so its consensus output needs a summary string", l.Number)
			}
		case EffectRoute:
			if l.OutputFrom != OutputWork || l.Output["protocol"].Type != TypeEnum || l.Output["domain"].Type != TypeString {
				return bad("layer %d routes, so its work output needs a protocol enum and a domain string", l.Number)
			}
			if slices.Contains(l.Output["protocol"].Values, p.ID) {
				return bad("layer %d routes to its own protocol", l.Number)
			}
			if l.Number != p.Last() {
				return bad("layer %d routes, so it must be the last layer", l.Number)
			}
		default:
			return bad("layer %d effect must be none, domain, consensus, summary or route", l.Number)
		}
	}
	return nil
}

// DefaultThreshold is Prism v1's consensus threshold on every layer.
const DefaultThreshold = 0.7

// PrismV1ID is the ID of the default protocol.
const PrismV1ID = "prism-v1"

func roles(rc ...any) []slots.RoleCount {
	out := make([]slots.RoleCount, 0, len(rc)/2)
	for i := 0; i < len(rc); i += 2 {
		out = append(out, slots.RoleCount{Role: rc[i].(slots.Role), Count: rc[i+1].(int)})
	}
	return out
}

// PrismV1 returns the default protocol, the table of docs/prism.md. Each
// call returns a fresh copy, safe to modify.
func PrismV1() Protocol {
	list := Field{Type: TypeStringList}
	str := Field{Type: TypeString}
	enum := func(values ...string) Field { return Field{Type: TypeEnum, Values: values} }
	return Protocol{ID: PrismV1ID, Name: "Prism v1", Layers: []Layer{
		{Number: 1, Name: "Framing", WorkRoles: roles(slots.RoleContributor, 2), ConsensusSlots: 2, Threshold: DefaultThreshold, Effect: EffectNone},
		{Number: 2, Name: "Classification", WorkRoles: roles(slots.RoleCritic, 2), ConsensusSlots: 2, Threshold: DefaultThreshold,
			Output: Shape{"domain": str}, OutputFrom: OutputWork, Effect: EffectDomain},
		{Number: 3, Name: "Evidence", WorkRoles: roles(slots.RoleSupporter, 2, slots.RoleCounter, 1), ConsensusSlots: 2, Threshold: DefaultThreshold,
			Output: Shape{"keyPoints": list, "strength": enum("strong", "moderate", "weak")}, OutputFrom: OutputWork, Effect: EffectNone},
		{Number: 4, Name: "Critique", WorkRoles: roles(slots.RoleCritic, 2, slots.RoleQuestioner, 1), ConsensusSlots: 2, Threshold: DefaultThreshold,
			Output: Shape{"weaknesses": list, "questions": list, "severity": enum("high", "moderate", "low")}, OutputFrom: OutputWork, Effect: EffectNone},
		{Number: 5, Name: "Defense", WorkRoles: roles(slots.RoleDefender, 1, slots.RoleAnswerer, 1), ConsensusSlots: 2, Threshold: DefaultThreshold,
			Output: Shape{"responseToWeaknesses": list, "answeredQuestions": list}, OutputFrom: OutputWork, Effect: EffectNone},
		{Number: 6, Name: "Deliberation", WorkRoles: roles(slots.RoleCritic, 2, slots.RoleQuestioner, 2, slots.RoleSupporter, 1, slots.RoleCounter, 1), ConsensusSlots: 3, Threshold: DefaultThreshold,
			Output: Shape{"verdict": enum("advance-to-synthesis", "flag"), "caveats": list}, OutputFrom: OutputWork, Effect: EffectNone},
		{Number: 7, Name: "Synthesis", ConsensusSlots: 3, Threshold: DefaultThreshold,
			Output: Shape{"summary": str, "recommendation": enum("accept", "accept-with-caveats", "reject", "needs-more-evidence")}, OutputFrom: OutputConsensus, Effect: EffectConsensus},
	}}
}

// String names a layer for messages.
func (l Layer) String() string { return fmt.Sprintf("L%d %s", l.Number, l.Name) }
