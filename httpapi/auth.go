package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

type principalKey struct{}

// principal returns the API key that authenticated the request.
func principal(r *http.Request) slots.Key {
	k, _ := r.Context().Value(principalKey{}).(slots.Key)
	return k
}

// bearer extracts the token of an "Authorization: Bearer <token>" header.
func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

func requireScope(k slots.Key, s slots.Scope) error {
	if !k.Has(s) {
		return store.Errorf(store.ErrForbidden, "missing_scope", "this API key lacks the %s scope", s)
	}
	return nil
}

func withPrincipal(ctx context.Context, k slots.Key) context.Context {
	return context.WithValue(ctx, principalKey{}, k)
}
