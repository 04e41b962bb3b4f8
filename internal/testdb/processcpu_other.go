//go:build !unix

package testdb

import (
	"errors"
	"time"
)

// ProcessCPU fails where getrusage is missing.
func ProcessCPU() (time.Duration, error) {
	return 0, errors.New("testdb: no process CPU time here")
}
