// Command fakeclaude stands in for the Claude Code CLI in claudecli's
// tests. It records how it was started (arguments, stdin, working
// directory, some environment) to $FAKE_RECORD, then behaves as
// $FAKE_MODE says, replaying transcripts from $FAKE_FIXTURES.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

func main() {
	stdin, _ := io.ReadAll(os.Stdin)
	cwd, _ := os.Getwd()
	rec, _ := json.Marshal(map[string]any{
		"args": os.Args[1:], "stdin": string(stdin), "cwd": cwd,
		"agora_agent": os.Getenv("AGORA_AGENT"), "from_env_file": os.Getenv("FROM_ENV_FILE"), "home": os.Getenv("HOME"), "traceparent": os.Getenv("TRACEPARENT"),
	})
	if f, err := os.OpenFile(os.Getenv("FAKE_RECORD"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
		fmt.Fprintf(f, "%s\n", rec)
		f.Close()
	}
	resuming := false
	for _, a := range os.Args[1:] {
		resuming = resuming || strings.HasPrefix(a, "--resume=")
	}
	replay := func(name string) {
		data, err := os.ReadFile(filepath.Join(os.Getenv("FAKE_FIXTURES"), name))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Stdout.Write(data)
	}
	init := `{"type":"system","subtype":"init","session_id":"fake-session"}` + "\n"
	switch os.Getenv("FAKE_MODE") {
	case "replay":
		replay(os.Getenv("FAKE_FIXTURE"))
	case "bad-resume":
		if resuming {
			replay("bad_resume.jsonl")
			fmt.Fprintln(os.Stderr, "No conversation found with session ID")
			os.Exit(1)
		}
		replay("success_tool_use.jsonl")
	case "hang":
		os.Stdout.WriteString(init)
		time.Sleep(time.Hour)
	case "chatty":
		// Keeps printing retries: never idle, but never done.
		for {
			os.Stdout.WriteString(`{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"error":"overloaded"}` + "\n")
			time.Sleep(20 * time.Millisecond)
		}
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
		os.Stdout.WriteString(init)
		time.Sleep(time.Hour)
	case "grandchild":
		child := exec.Command("sleep", "3600")
		_ = child.Start()
		os.WriteFile(os.Getenv("FAKE_RECORD")+".child", []byte(fmt.Sprint(child.Process.Pid)), 0o600)
		os.Stdout.WriteString(init)
		time.Sleep(time.Hour)
	case "linger":
		replay("success_tool_use.jsonl")
		time.Sleep(time.Hour)
	case "crash":
		os.Stdout.WriteString(init)
		fmt.Fprintln(os.Stderr, strings.Repeat("noise ", 3000)+"fatal: the end")
		os.Exit(3)
	}
}
