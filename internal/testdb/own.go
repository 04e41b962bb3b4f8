package testdb

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// Server is a database server of a test's own, which the test may kill and
// start again on the same port with the same data: what fault tests need
// and a shared server must never suffer.
type Server struct {
	// URL reaches the server: a postgres:// DSN or a redis:// URL.
	URL   string
	start func() error
	kill  func() error
}

// Kill stops the server at once, as a crash would: PostgreSQL without a
// checkpoint (immediate mode: recovery on the next start), Redis with
// SIGKILL.
func (s *Server) Kill(t testing.TB) {
	t.Helper()
	if err := s.kill(); err != nil {
		t.Fatalf("testdb: kill: %v", err)
	}
}

// Start starts the killed server again on its port, with its data.
func (s *Server) Start(t testing.TB) {
	t.Helper()
	if err := s.start(); err != nil {
		t.Fatalf("testdb: start: %v", err)
	}
}

// OwnPostgres starts a PostgreSQL server for t alone (initdb and pg_ctl
// must be installed; under CI=true their absence fails the test), stopped
// and removed when t ends.
func OwnPostgres(t testing.TB) *Server {
	t.Helper()
	dir, err := os.MkdirTemp("", "agora-own-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	c, err := newCluster(dir)
	if err != nil {
		Unavailable(t, "no PostgreSQL of the test's own: install the postgresql package (%v)", err)
	}
	s := &Server{URL: c.dsn, start: c.start, kill: c.stop}
	s.Start(t)
	t.Cleanup(func() { _ = s.kill() })
	return s
}

// OwnRedis starts a redis-server for t alone, logging every write to disk
// (appendonly, fsync always) so that a kill loses nothing, stopped when t
// ends.
func OwnRedis(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		Unavailable(t, "no redis-server for a server of the test's own: install the redis-server package (%v)", err)
	}
	dir := t.TempDir()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	var cmd *exec.Cmd
	s := &Server{URL: "redis://" + addr}
	s.start = func() error {
		cmd = exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
			"--save", "", "--appendonly", "yes", "--appendfsync", "always")
		if err := cmd.Start(); err != nil {
			return err
		}
		for i := 0; i < 200; i++ {
			if c, err := net.Dial("tcp", addr); err == nil {
				c.Close()
				return nil
			}
			time.Sleep(25 * time.Millisecond)
		}
		return fmt.Errorf("redis-server did not start on %s", addr)
	}
	s.kill = func() error {
		if cmd == nil || cmd.Process == nil {
			return nil
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		cmd = nil
		return nil
	}
	s.Start(t)
	t.Cleanup(func() { _ = s.kill() })
	return s
}
