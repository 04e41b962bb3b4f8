package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/internal/testdb"
)

func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

func demo(t *testing.T, args ...string) string {
	t.Helper()
	var out strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	require.NoError(t, run(ctx, append(args, "-timeout", "2m"), &out))
	text := out.String()
	for _, want := range []string{"prism: complete", "3/3", "arena: game completed", "discussion: responses 2/2, resolved", "summary:"} {
		require.Contains(t, text, want)
	}
	return text
}

func TestDemoMemory(t *testing.T) { t.Logf("\n%s", demo(t)) }

func TestDemoRedis(t *testing.T) {
	_, prefix := testdb.RedisClient(t) // cleans the prefix afterwards
	demo(t, "-store", testdb.RedisURL(t), "-redis-prefix", prefix)
}

func TestDemoPostgres(t *testing.T) { demo(t, "-store", testdb.PostgresDSN(t)) }
