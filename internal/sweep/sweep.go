// Package sweep runs the services' sweepers.
package sweep

import (
	"context"
	"time"
)

// Every calls fn every interval until ctx is done — the loop behind
// every service's sweeper (lapsed leases, overdue prompts). Errors go to
// onErr when it is not nil, except those that only say ctx ended.
func Every(ctx context.Context, interval time.Duration, fn func(context.Context) error, onErr func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := fn(ctx); err != nil && onErr != nil && ctx.Err() == nil {
				onErr(err)
			}
		}
	}
}
