package prism

import "github.com/agorahq/agora/identity"

// The scopes of the Prism routes.
const (
	// ScopePipelineReview lets an API key resolve pipeline flags.
	ScopePipelineReview identity.Scope = "pipeline:review"
	// ScopeConsensusWrite lets an API key post a claim's consensus
	// record, as the original's scope of the same name.
	ScopeConsensusWrite identity.Scope = "consensus:write"
)

// Scopes returns the scopes of this package, for identity.WithScopes.
func Scopes() []identity.Scope { return []identity.Scope{ScopePipelineReview, ScopeConsensusWrite} }
