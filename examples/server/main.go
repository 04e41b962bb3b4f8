// Command server runs every Agora API on one address: /api/v1 (claims,
// keys, role slots, the Prism pipeline), the arena under /api/games and
// /api/demo, /api/discussion and /api/squad-chat, and with -agent-dir the
// coding-agent chat under /agent/ and /chat.
//
//	go run ./examples/server -addr 127.0.0.1:8080 -store memory
//	go run ./examples/server -store 'postgres://postgres@127.0.0.1:5432/agora?sslmode=disable'
//	go run ./examples/server -store redis://127.0.0.1:6379/0
//
// Every flag can also come from its environment variable, AGORA_ and the
// flag's name (-store: AGORA_STORE, -batch-wait: AGORA_BATCH_WAIT); the
// command line wins, and -h lists them all. The admin key comes from
// AGORA_ADMIN_KEY (or -admin-key, which other users can read in ps);
// without either the server makes one up and prints it once. On
// PostgreSQL it makes the schema the DSN's search_path names when it is
// missing, and logs the migrations it applies. See docs/operations.md.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/agorahq/agora/examples/internal/server"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := server.Run(ctx, os.Args[1:], os.Stdout, nil); err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}
