//go:build !unix

package main

import "time"

// processCPU reads nothing where getrusage is missing.
func processCPU() (time.Duration, bool) { return 0, false }
