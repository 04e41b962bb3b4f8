package agentchat

import (
	"context"

	"github.com/agorahq/agora/internal/hook"
)

// Observer hears what a Service does, for metrics and traces, as River's
// hooks do: package observe implements it (observe.Services), and a host
// gives it with WithObserver. Its methods run on the path of each call:
// they must be cheap, must not block, and change nothing the Service does.
type Observer interface {
	// Call is told of a call of one of the Service's methods as it starts,
	// op naming it ("agentchat.Send"): the call goes on with the context Call returns
	// and, when it returns, runs the function Call returns with the error it
	// returns (nil for a success), so the observer records the call's outcome.
	Call(ctx context.Context, op string) (context.Context, func(error))
}

// WithObserver has o hear the Service's calls; nil observes
// nothing.
func WithObserver(o Observer) Option {
	return func(s *Service) {
		if o != nil {
			s.obs = o
		}
	}
}

// nopObserver is the observer of a Service given none.
type nopObserver = hook.Nop
