//go:build unix

package mcp_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the process has used, user and system: what a
// benchmark's iterations cost, whatever else the machine runs meanwhile.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
