//go:build unix

package testdb

import (
	"syscall"
	"time"
)

// ProcessCPU is the CPU time this process has used so far, user and
// system, of every goroutine and the collector's: what a benchmark's own
// side costs, whatever else the machine runs meanwhile.
func ProcessCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
