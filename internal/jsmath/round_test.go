package jsmath

import (
	"math"
	"testing"
)

func TestRound(t *testing.T) {
	for _, c := range []struct{ in, want float64 }{
		{2.5, 3}, {-2.5, -2}, {2.4999, 2}, {-2.5000001, -3}, {0.49999999999999994, 0},
		{99.5, 100}, {100.4, 100}, {0, 0}, {math.Inf(1), math.Inf(1)}, {math.Inf(-1), math.Inf(-1)},
	} {
		if got := Round(c.in); got != c.want {
			t.Errorf("Round(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	if !math.IsNaN(Round(math.NaN())) {
		t.Error("Round(NaN) is not NaN")
	}
}
