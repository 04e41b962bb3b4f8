package store_test

import (
	"testing"
	"time"

	"github.com/agorahq/agora/store"
)

func TestMillis(t *testing.T) {
	t.Parallel()
	if store.Millis(time.Time{}) != 0 || !store.FromMillis(0).IsZero() || !store.Milli(time.Time{}).IsZero() {
		t.Fatal("the zero time is not 0 both ways")
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 123_456_789, time.FixedZone("X", 3600))
	if got := store.Millis(at); got != at.UnixMilli() {
		t.Fatalf("Millis = %d, want %d", got, at.UnixMilli())
	}
	want := time.Date(2026, 1, 2, 2, 4, 5, 123_000_000, time.UTC)
	if got := store.FromMillis(store.Millis(at)); got != want {
		t.Fatalf("FromMillis(Millis) = %v, want %v", got, want)
	}
	if got := store.Milli(time.Now()); got != store.FromMillis(store.Millis(got)) || got.Location() != time.UTC {
		t.Fatalf("Milli(now) = %v: not as a backend reads it back", got)
	}
}
