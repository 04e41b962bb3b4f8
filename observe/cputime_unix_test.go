//go:build unix

package observe_test

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the process has used, user and system, every
// goroutine's and the garbage collector's: unlike the wall clock, it does
// not grow when other processes share the cores.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
