// Command agentchat puts the coding-agent chat in front of an application:
// a reverse proxy to the app, with /chat and /agent/* answered by Agora.
//
//	go run ./examples/agentchat -dir . -addr 127.0.0.1:8090
//
// Without -upstream it starts a tiny app of its own to proxy to. The agent
// is the Claude Code CLI (-claude), run in -dir. -chat-auth (or
// $AGORA_CHAT_AUTH) guards the agent API: a shared secret (-secret, sent
// by the browser as the agent_secret cookie), slot-machine's signed
// X-SlotMachine-User header (hmac, key -chat-secret), or delegating to the
// application's auth endpoint (-chat-auth-url).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/agorahq/agora/agentchat"
	"github.com/agorahq/agora/agentchat/claudecli"
	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/httpapi/chatauth"
	"github.com/agorahq/agora/store/memstore"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], func(string) {}); err != nil {
		fmt.Fprintln(os.Stderr, "agentchat:", err)
		os.Exit(1)
	}
}

// tinyApp stands in for the application behind the proxy.
func tinyApp() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>Tiny app</title><h1>Tiny app</h1><p>You asked for %s. <a href=\"/chat\">Talk to its agent</a>.</p>", url.PathEscape(r.URL.Path))
	})
}

func run(ctx context.Context, args []string, ready func(addr string)) error {
	fs := flag.NewFlagSet("agentchat", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8090", "address to listen on")
	upstream := fs.String("upstream", "", "the application to proxy to (default: a tiny built-in app)")
	dir := fs.String("dir", ".", "the agent's working directory")
	claude := fs.String("claude", "claude", "the Claude Code CLI")
	allowedHosts := fs.String("allowed-hosts", os.Getenv("AGORA_ALLOWED_HOSTS"), "comma-separated Host names answered besides loopback ones (default $AGORA_ALLOWED_HOSTS); on a loopback -addr every other name is refused, against DNS rebinding")
	secret := fs.String("secret", "", "require this shared secret (header X-Agent-Secret or cookie agent_secret); short for -chat-auth secret -chat-secret …")
	var auth chatauth.Config
	auth.Flags(fs, os.Getenv)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *secret != "" {
		auth.Mode, auth.Secret = "secret", *secret
	}
	scheme, err := auth.Scheme()
	if err != nil {
		return err
	}
	if err := auth.CheckExposure(*addr); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))

	var app http.Handler = tinyApp()
	if *upstream != "" {
		u, err := url.Parse(*upstream)
		if err != nil {
			return err
		}
		app = httputil.NewSingleHostReverseProxy(u)
	}
	st := memstore.New()
	chat := agentchat.New(st, &claudecli.Runner{Path: *claude, Dir: *dir, SystemPrompt: agentchat.TitleInstructions}, agentchat.WithNotifier(st))
	if _, err := chat.Start(ctx); err != nil {
		return err
	}
	defer chat.Close()
	handler := httpapi.GuardHosts(httpapi.InterceptChat(httpapi.AgentChat(chat, httpapi.WithLogger(log), httpapi.WithChatAuth(scheme)), app),
		*addr, strings.Split(*allowedHosts, ","))

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("listening", "app", "http://"+ln.Addr().String()+"/", "chat", "http://"+ln.Addr().String()+"/chat")
	ready(ln.Addr().String())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
