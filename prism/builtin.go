package prism

import (
	"fmt"
	"slices"

	"github.com/agorahq/agora/slots"
)

// The roles AOP's protocols other than Prism v1 seat, beside the council
// roles of slots (contributor, critic, …).
const (
	RoleClassifier  slots.Role = "classifier"  // meta-v1: votes the protocol and domain
	RoleFramer      slots.Role = "framer"      // lens-v1: the question's dimensions
	RoleLens        slots.Role = "lens"        // lens-v1: one analytical lens
	RoleReviser     slots.Role = "reviser"     // lens-v1: positions revised after critique
	RoleSynthesizer slots.Role = "synthesizer" // lens-v1: one final position
)

// PipelineRoles are the roles a protocol's work slots may have besides
// slots' council roles.
var PipelineRoles = []slots.Role{RoleClassifier, RoleFramer, RoleLens, RoleReviser, RoleSynthesizer}

// validRole reports whether a work slot may have role r.
func validRole(r slots.Role) bool { return r.Valid() || slices.Contains(PipelineRoles, r) }

// validateRoles checks a layer's work roles: known roles, counts of at
// least 1, at most MaxSlotsPerPhase slots in all (none: a consensus-only
// layer).
func validateRoles(roles []slots.RoleCount) error {
	total := 0
	for _, rc := range roles {
		if !validRole(rc.Role) {
			return fmt.Errorf("invalid role %q", rc.Role)
		}
		if rc.Count < 1 {
			return fmt.Errorf("count for role %q must be at least 1", rc.Role)
		}
		total += rc.Count
	}
	if total > MaxSlotsPerPhase {
		return fmt.Errorf("%d work slots; the limit is %d", total, MaxSlotsPerPhase)
	}
	return nil
}

// The IDs of AOP's protocols other than Prism v1, built in beside it.
const (
	PrismV1SoloID = "prism-v1-solo"
	MetaV1ID      = "meta-v1"
	LensV1ID      = "lens-v1"
)

// PrismV1Solo returns prism-v1-solo, AOP's single-agent test protocol:
// Prism v1's layers, structured outputs and effects with one work slot (the
// layer's first role) and one consensus slot per layer, threshold 0.5.
// (AOP's own solo protocol writes no domain at its classification; Agora
// keeps Prism v1's effects, so a solo claim is classified too.)
func PrismV1Solo() Protocol {
	p := PrismV1()
	p.ID, p.Name = PrismV1SoloID, "Prism v1 Solo"
	for i := range p.Layers {
		l := &p.Layers[i]
		if len(l.WorkRoles) > 0 {
			l.WorkRoles = []slots.RoleCount{{Role: l.WorkRoles[0].Role, Count: 1}}
		}
		l.ConsensusSlots, l.Threshold = 1, 0.5
	}
	return p
}

// MetaV1 returns meta-v1, AOP's routing protocol: one layer 0,
// meta-classify, where three classifiers vote the protocol (prism-v1 for
// factual, testable claims; lens-v1 for open questions and hypotheticals)
// and the domain a claim should run under, threshold 0.5; the claim then
// continues under the protocol the majority chose, with the domain the
// majority chose.
func MetaV1() Protocol {
	return Protocol{ID: MetaV1ID, Name: "Meta v1", Layers: []Layer{
		{Number: 0, Name: "Meta-classify", WorkRoles: roles(RoleClassifier, 3), ConsensusSlots: 3, Threshold: 0.5,
			Output:     Shape{"protocol": {Type: TypeEnum, Values: []string{PrismV1ID, LensV1ID}}, "domain": {Type: TypeString}},
			OutputFrom: OutputWork, Effect: EffectRoute},
	}}
}

// LensV1 returns lens-v1, AOP's protocol for open questions and
// hypotheticals: parallel lenses, critique and revision, no verdict — its
// summary layer writes a map of the strongest positions as the claim's
// consensus record.
func LensV1() Protocol {
	return Protocol{ID: LensV1ID, Name: "Lens v1", Layers: []Layer{
		{Number: 1, Name: "Framing", WorkRoles: roles(RoleFramer, 2), ConsensusSlots: 2, Threshold: DefaultThreshold, Effect: EffectNone},
		{Number: 2, Name: "Lenses", WorkRoles: roles(RoleLens, 3), ConsensusSlots: 2, Threshold: DefaultThreshold, Effect: EffectNone},
		{Number: 3, Name: "Critique", WorkRoles: roles(slots.RoleCritic, 3), ConsensusSlots: 2, Threshold: 0.6, Effect: EffectNone},
		{Number: 4, Name: "Revision", WorkRoles: roles(RoleReviser, 2), ConsensusSlots: 2, Threshold: 0.6, Effect: EffectNone},
		{Number: 5, Name: "Synthesis", WorkRoles: roles(RoleSynthesizer, 2), ConsensusSlots: 2, Threshold: DefaultThreshold, Effect: EffectNone},
		{Number: 6, Name: "Summary", ConsensusSlots: 3, Threshold: 0.6,
			Output: Shape{"summary": {Type: TypeString}}, OutputFrom: OutputConsensus, Effect: EffectSummary},
	}}
}

// Builtin returns the built-in protocol with ID id — Prism v1,
// prism-v1-solo, meta-v1 or lens-v1 — a fresh copy, and whether there is
// one.
func Builtin(id string) (Protocol, bool) {
	switch id {
	case PrismV1ID:
		return PrismV1(), true
	case PrismV1SoloID:
		return PrismV1Solo(), true
	case MetaV1ID:
		return MetaV1(), true
	case LensV1ID:
		return LensV1(), true
	}
	return Protocol{}, false
}

// BuiltinIDs lists the built-in protocols' IDs.
var BuiltinIDs = []string{PrismV1ID, PrismV1SoloID, MetaV1ID, LensV1ID}
