package main

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/examples/internal/server"
	"github.com/agorahq/agora/httpapi/client"
	"github.com/agorahq/agora/prism"
)

// TestPrismWorkersAgainstAServer runs the command's Prism workers against
// a server and sees a claim complete.
func TestPrismWorkersAgainstAServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ready := make(chan string, 1)
	go func() {
		_ = server.Run(ctx, []string{"-addr", "127.0.0.1:0", "-admin-key", "adm", "-quiet"}, io.Discard, func(a string) { ready <- a })
	}()
	base := "http://" + <-ready
	c := client.New(base, client.WithToken("adm"))
	claim, err := c.CreateClaim(ctx, "t", "b", "", "")
	require.NoError(t, err)
	agentsCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- run(agentsCtx, []string{"-server", base, "-admin-key", "adm", "-prism", "16"}) }()
	require.Eventually(t, func() bool {
		p, err := c.Pipeline(ctx, claim.ID)
		return err == nil && p.Status == prism.StatusComplete
	}, 30*time.Second, 50*time.Millisecond)
	stop()
	require.NoError(t, <-done)
}
