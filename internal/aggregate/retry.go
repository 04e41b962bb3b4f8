package aggregate

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/agorahq/agora/store"
)

// maxAttempts bounds retryOnConflict. Each lost attempt means another
// change was saved, so the loop always progresses; the bound only turns a
// livelock into an error.
const maxAttempts = 1000

// retryOnConflict runs attempt until it returns anything but an error
// matching conflict — the loop of every compare-and-set save: read, change
// a copy, save if the version did not move, else start over. After a few
// lost attempts it waits a little, with jitter, so racing callers spread
// out. It stops with ctx's error when ctx ends, and with store.ErrBusy
// after maxAttempts.
func retryOnConflict(ctx context.Context, conflict error, attempt func() error) error {
	for i := 0; i < maxAttempts; i++ {
		err := attempt()
		if !errors.Is(err, conflict) {
			return err
		}
		if i > 2 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Duration(rand.IntN(1000*min(i, 20))) * time.Microsecond):
			}
		}
	}
	return store.ErrBusy
}
