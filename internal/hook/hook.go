// Package hook holds what the domain services share of their Observer
// option (prism.WithObserver, arena.WithObserver, …): the no-op observer a
// Service starts with. Each domain declares its own Observer interface,
// the call hook and its own events; package observe implements them all.
package hook

import "context"

// Nop observes nothing: Call hands ctx back and its end does nothing.
type Nop struct{}

// Call implements every domain's Observer.Call.
func (Nop) Call(ctx context.Context, _ string) (context.Context, func(error)) { return ctx, nothing }

func nothing(error) {}
