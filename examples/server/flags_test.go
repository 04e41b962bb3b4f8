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
