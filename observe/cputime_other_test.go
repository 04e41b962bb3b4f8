//go:build !unix

package observe_test

import "time"

// processCPU is not measured here: the benchmarks report no cpu-ns/op.
func processCPU() time.Duration { return 0 }
