package main

import (
	"bytes"
	"context"
	"flag"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestFlagsFromEnvironment: every flag can come from AGORA_<NAME>, the
// command line wins, and a value a flag refuses names its variable.
func TestFlagsFromEnvironment(t *testing.T) {
	t.Parallel()
	env := map[string]string{"AGORA_STORE": "redis://example:6379/0", "AGORA_ADDR": "127.0.0.1:9999", "AGORA_BATCH_WAIT": "2ms", "AGORA_BATCH": "true"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	store := fs.String("store", "memory", "")
	addr := fs.String("addr", "127.0.0.1:8080", "")
	wait := fs.Duration("batch-wait", 0, "")
	batch := fs.Bool("batch", false, "")
	quiet := fs.Bool("quiet", false, "")
	require.NoError(t, parseFlags(fs, []string{"-addr", "127.0.0.1:7777"}, lookup))
	require.Equal(t, "redis://example:6379/0", *store)
	require.Equal(t, "127.0.0.1:7777", *addr, "the command line wins")
	require.Equal(t, 2*time.Millisecond, *wait)
	require.True(t, *batch)
	require.False(t, *quiet)

	env["AGORA_BATCH_WAIT"] = "soon"
	fs = flag.NewFlagSet("t", flag.ContinueOnError)
	fs.Duration("batch-wait", 0, "")
	err := parseFlags(fs, nil, lookup)
	require.ErrorContains(t, err, "AGORA_BATCH_WAIT")

	var usage bytes.Buffer
	fs = flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(&usage)
	fs.String("store", "memory", "the backend")
	require.ErrorIs(t, parseFlags(fs, []string{"-h"}, lookup), flag.ErrHelp)
	require.Contains(t, usage.String(), "AGORA_STORE")
}

// TestHelpIsNoFailure: -h prints the usage and Run returns nil, so the
// command exits 0.
func TestHelpIsNoFailure(t *testing.T) {
	t.Parallel()
	require.NoError(t, run(context.Background(), []string{"-h"}, &bytes.Buffer{}, nil))
	require.Error(t, run(context.Background(), []string{"-no-such-flag"}, &bytes.Buffer{}, nil))
}

// TestRateZeroIsNoLimit: -rate 0 serves with no per-key limit (the
// limiters' arithmetic once overflowed on it), and a negative rate is
// refused at start with the flag's name.
func TestRateZeroIsNoLimit(t *testing.T) {
	t.Parallel()
	for _, r := range []string{"-1", "NaN"} {
		err := run(context.Background(), []string{"-rate", r, "-addr", "127.0.0.1:0"}, &bytes.Buffer{}, nil)
		require.ErrorContains(t, err, "-rate", r)
	}
	base, _ := serve(t, "-rate", "0", "-burst", "1", "-admin-key", "admin-rate")
	status, key := call(t, "POST", base+"/api/v1/keys", "admin-rate", `{"name":"poster","scopes":["claim:create"]}`)
	require.Equal(t, 201, status)
	for i := range 30 {
		status, body := call(t, "POST", base+"/api/v1/claims", key["key"].(string), `{"title":"claim","body":"one of many"}`)
		require.Equal(t, 201, status, "claim %d: no limit, not a burst of one: %v", i, body)
	}
}
