package httpapi

import (
	"maps"
	"slices"

	"github.com/agorahq/agora/arena"
	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/prism"
	"github.com/agorahq/agora/slots"
)

// Scopes returns every scope the domains this package serves declare, in
// the order an unknown scope's error lists them, and the other names they
// are asked for by: a host that serves them passes both to identity, as
// identity.WithScopes(httpapi.Scopes()), so that keys may carry them.
func Scopes() ([]identity.Scope, map[identity.Scope]identity.Scope) {
	all := slices.Concat(slots.Scopes(), identity.Scopes(), prism.Scopes(), arena.Scopes(), discussion.Scopes(), slots.UnservedScopes())
	aliases := map[identity.Scope]identity.Scope{}
	maps.Copy(aliases, slots.ScopeAliases())
	return all, aliases
}
