package slots

import "github.com/agorahq/agora/identity"

// The scopes of the slots routes: an API key carries them (identity.Key)
// and the route table asks for them.
const (
	ScopeSlotsConfigure identity.Scope = "slots:configure" // configure role slots
	ScopeCommentCreate  identity.Scope = "comment:create"  // comment, take and finish slots
	ScopeClaimCreate    identity.Scope = "claim:create"    // create claims
)

// The original's scopes that guard routes Agora does not serve: a key may
// carry them (the original's agent setup asks for them) and they grant
// nothing here.
const (
	ScopeClassificationWrite identity.Scope = "classification:write"
	ScopePolicyWrite         identity.Scope = "policy:write"
	ScopeOutputWrite         identity.Scope = "output:write"
)

// Scopes returns the scopes of this package, for identity.WithScopes.
func Scopes() []identity.Scope {
	return []identity.Scope{ScopeSlotsConfigure, ScopeCommentCreate, ScopeClaimCreate}
}

// UnservedScopes returns the original's scopes that guard routes Agora does
// not serve, for identity.WithScopes: a key may carry them.
func UnservedScopes() []identity.Scope {
	return []identity.Scope{ScopeClassificationWrite, ScopePolicyWrite, ScopeOutputWrite}
}

// ScopeAliases returns the original's other names of this package's
// scopes, for identity.WithScopes: a key asked for with "claim:new"
// carries ScopeClaimCreate.
func ScopeAliases() map[identity.Scope]identity.Scope {
	return map[identity.Scope]identity.Scope{"claim:new": ScopeClaimCreate}
}
