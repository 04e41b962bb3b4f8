// Package testdb gives tests a real PostgreSQL database or Redis server to
// talk to, isolated from every other test.
//
// It uses AGORA_POSTGRES_DSN / AGORA_REDIS_URL when they are set; otherwise
// it starts a throwaway server on a free loopback port when the binaries are
// installed (initdb/pg_ctl, redis-server), stopping it when the test binary's
// tests are over; otherwise the test is skipped with a message naming the
// package to install — except when CI=true, where a missing server fails the
// test, so a green CI run always means every backend ran.
package testdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/lib/pq" // the postgres driver
)

// UniqueName returns a fresh lower-case name such as "t_3fa9c1d2e4b5a6f7",
// usable as a schema name or key prefix.
func UniqueName() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "t_" + hex.EncodeToString(b[:])
}

// Unavailable skips t for a server or tool the machine lacks, and fails it
// instead under CI=true, where .ci/run has installed everything a test
// needs: a skip there would report a case that never ran as passing.
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true and "+format, args...)
	}
	t.Skipf(format, args...)
}

var (
	pgOnce sync.Once
	pgDSN  string
	pgErr  error
)

// PostgresDSN returns a DSN whose connections use a fresh schema of their own
// (through search_path), dropped when t ends.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	return PostgresSchemaDSN(t, postgresBase(t))
}

// postgresBase returns the DSN of the database tests share.
func postgresBase(t testing.TB) string {
	t.Helper()
	base := os.Getenv("AGORA_POSTGRES_DSN")
	if base == "" {
		pgOnce.Do(func() { pgDSN, pgErr = startPostgres() })
		if pgErr != nil {
			Unavailable(t, "no PostgreSQL for this test: set AGORA_POSTGRES_DSN or install the postgresql package (%v)", pgErr)
		}
		base = pgDSN
	}
	return base
}

// PostgresDatabase creates a database beside the one tests share, with
// options appended to its CREATE DATABASE (a collation, say), dropped when
// t ends, and returns its DSN for PostgresSchemaDSN.
func PostgresDatabase(t testing.TB, options string) string {
	t.Helper()
	base := postgresBase(t)
	name := UniqueName()
	if err := execOn(base, "CREATE DATABASE "+name+" "+options); err != nil {
		Unavailable(t, "PostgreSQL at %s cannot create a database %s: %v", redact(base), options, err)
	}
	t.Cleanup(func() { _ = execOn(base, "DROP DATABASE "+name+" WITH (FORCE)") })
	return withDatabase(base, name)
}

// PostgresSchemaDSN returns a DSN of the database at base whose connections
// use a fresh schema of their own (through search_path), dropped when t
// ends.
func PostgresSchemaDSN(t testing.TB, base string) string {
	t.Helper()
	schema := UniqueName()
	if err := execOn(base, "CREATE SCHEMA "+schema); err != nil {
		Unavailable(t, "PostgreSQL at %s is not usable: %v", redact(base), err)
	}
	t.Cleanup(func() { _ = execOn(base, "DROP SCHEMA "+schema+" CASCADE") })
	return withParam(base, "search_path", schema)
}

// execOn runs one statement on a connection of its own to dsn, within 30 s.
func execOn(dsn, statement string) error {
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = db.ExecContext(ctx, statement)
	return err
}

// withParam adds a connection parameter to a URL or key=value DSN.
func withParam(dsn, key, value string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err == nil {
			q := u.Query()
			q.Set(key, value)
			u.RawQuery = q.Encode()
			return u.String()
		}
	}
	return dsn + " " + key + "=" + value
}

// withDatabase points a URL or key=value DSN at another database.
func withDatabase(dsn, name string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err == nil {
			u.Path = "/" + name
			return u.String()
		}
	}
	return dsn + " dbname=" + name
}

func redact(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		u.User = url.User(u.User.Username())
		return u.String()
	}
	return dsn
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// pgBinary finds a PostgreSQL server binary on PATH or in Debian's
// versioned directories.
func pgBinary(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
	if len(matches) > 0 {
		return matches[len(matches)-1], nil
	}
	return "", fmt.Errorf("%s not found", name)
}

// startPostgres runs a cluster of the package's tests in a temporary
// directory, stopped by Main.
func startPostgres() (string, error) {
	dir, err := os.MkdirTemp("", "agora-pg-")
	if err != nil {
		return "", err
	}
	c, err := newCluster(dir)
	if err == nil {
		err = c.start()
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", err
	}
	stops = append(stops, func() {
		_ = c.stop()
		_ = os.RemoveAll(dir)
	})
	return c.dsn, nil
}

// cluster is a PostgreSQL data directory on a free loopback port.
type cluster struct {
	dsn   string
	start func() error // pg_ctl start, waiting until it accepts connections
	stop  func() error // pg_ctl stop -m immediate: no checkpoint, as a crash
}

// newCluster runs initdb in dir. PostgreSQL refuses to run as root, so as
// root it runs its commands as the postgres user.
func newCluster(dir string) (*cluster, error) {
	initdb, err := pgBinary("initdb")
	if err != nil {
		return nil, err
	}
	pgctl, err := pgBinary("pg_ctl")
	if err != nil {
		return nil, err
	}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root and there is no postgres user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
	}
	run := func(name string, args ...string) error {
		cmd := exec.Command(name, args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s: %v: %s", filepath.Base(name), err, out)
		}
		return nil
	}
	data := filepath.Join(dir, "data")
	if err := run(initdb, "-D", data, "-U", "postgres", "--auth=trust", "--no-sync"); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200", port, dir)
	return &cluster{
		dsn: fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port),
		start: func() error {
			return run(pgctl, "-D", data, "-o", opts, "-w", "-l", filepath.Join(dir, "log"), "start")
		},
		stop: func() error { return run(pgctl, "-D", data, "-m", "immediate", "-w", "stop") },
	}, nil
}

var (
	redisOnce sync.Once
	redisAddr string
	redisErr  error
)

// RedisURL returns the URL of a real Redis server. The caller isolates its
// keys under UniqueName(): servers are shared, never flushed.
func RedisURL(t testing.TB) string {
	t.Helper()
	if u := os.Getenv("AGORA_REDIS_URL"); u != "" {
		return u
	}
	redisOnce.Do(func() { redisAddr, redisErr = startRedis() })
	if redisErr != nil {
		Unavailable(t, "no Redis for this test: set AGORA_REDIS_URL or install the redis-server package (%v)", redisErr)
	}
	return "redis://" + redisAddr
}

func startRedis() (string, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return "", err
	}
	port, err := freePort()
	if err != nil {
		return "", err
	}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		return "", err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for i := 0; i < 100; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			stops = append(stops, func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			return addr, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	return "", fmt.Errorf("redis-server did not start on %s", addr)
}

var stops []func()

// Main runs a package's tests and then stops any server this package
// started. Call it from TestMain: os.Exit(testdb.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	for _, stop := range stops {
		stop()
	}
	return code
}
