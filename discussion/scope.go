package discussion

import "github.com/agorahq/agora/identity"

// The scopes of the discussion and squad-chat routes when the host
// requires API keys on them (httpapi.WithKeys).
const (
	ScopeWrite identity.Scope = "discussion:write" // ask, answer, post to the squad chat
	ScopeAdmin identity.Scope = "discussion:admin" // resolve or cancel any prompt, speak as a human
)

// Scopes returns the scopes of this package, for identity.WithScopes.
func Scopes() []identity.Scope { return []identity.Scope{ScopeWrite, ScopeAdmin} }
