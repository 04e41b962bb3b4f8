package arena

import "github.com/agorahq/agora/identity"

// The scopes of the arena's routes when the host requires API keys on them
// (httpapi.WithKeys).
const (
	ScopePlay  identity.Scope = "arena:play"  // register agents, argue, decide
	ScopeAdmin identity.Scope = "arena:admin" // create, start and advance games, fillers, the demo
)

// Scopes returns the scopes of this package, for identity.WithScopes.
func Scopes() []identity.Scope { return []identity.Scope{ScopePlay, ScopeAdmin} }
