package aggregate

import (
	"context"
	"errors"
	"testing"
)

func TestRetryOnConflict(t *testing.T) {
	conflict := errors.New("version moved")
	calls := 0
	err := retryOnConflict(context.Background(), conflict, func() error {
		calls++
		if calls < 5 {
			return conflict
		}
		return nil
	})
	if err != nil || calls != 5 {
		t.Fatalf("err %v after %d calls; want nil after 5", err, calls)
	}
	other := errors.New("not found")
	if err := retryOnConflict(context.Background(), conflict, func() error { return other }); !errors.Is(err, other) {
		t.Fatalf("a non-conflict error comes back at once, got %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := retryOnConflict(ctx, conflict, func() error { return conflict }); !errors.Is(err, context.Canceled) {
		t.Fatalf("a done context stops the loop, got %v", err)
	}
}
