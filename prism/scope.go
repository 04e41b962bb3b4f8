package prism

import "github.com/agorahq/agora/identity"

// ScopePipelineReview lets an API key resolve pipeline flags.
const ScopePipelineReview identity.Scope = "pipeline:review"

// Scopes returns the scopes of this package, for identity.WithScopes.
func Scopes() []identity.Scope { return []identity.Scope{ScopePipelineReview} }
