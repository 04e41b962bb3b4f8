package main

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
	"time"

	_ "github.com/lib/pq" // the PostgreSQL driver, as pgstore uses it
	"github.com/redis/go-redis/v9"

	"github.com/agorahq/agora/store/redisstore"
)

// data is where the demo keeps what it makes.
type data struct {
	backend string // memory, postgres or redis
	url     string // the server's -store
	prefix  string // the server's -redis-prefix
	where   string // the transcript's name for it
	keep    string // how a user removes it
	drop    func(ctx context.Context) error
}

// schemaName is what -schema accepts: an unquoted PostgreSQL identifier.
var schemaName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// openData chooses the demo's own place on the backend -store names: a
// schema of its own on PostgreSQL (made here), a key prefix of its own on
// Redis; fresh names end in suffix.
func openData(ctx context.Context, o options, suffix string) (data, error) {
	switch {
	case strings.HasPrefix(o.store, "postgres://"), strings.HasPrefix(o.store, "postgresql://"):
		schema := o.schema
		if schema == "" {
			schema = "agora_demo_" + suffix
		}
		if !schemaName.MatchString(schema) {
			return data{}, fmt.Errorf("-schema %q: want lower-case letters, digits and _, not starting with a digit", schema)
		}
		u, err := url.Parse(o.store)
		if err != nil {
			return data{}, fmt.Errorf("-store: %w", err)
		}
		if err := onPostgres(ctx, o.store, "CREATE SCHEMA IF NOT EXISTS "+schema); err != nil {
			return data{}, err
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		db := strings.TrimPrefix(u.Path, "/")
		return data{
			backend: "postgres", url: u.String(),
			where: fmt.Sprintf("PostgreSQL schema %s of database %q", schema, db),
			keep:  fmt.Sprintf("kept after the demo: DROP SCHEMA %s CASCADE removes it (or run with -clean)", schema),
			drop: func(ctx context.Context) error {
				return onPostgres(ctx, o.store, "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
			},
		}, nil
	case strings.HasPrefix(o.store, "redis://"), strings.HasPrefix(o.store, "rediss://"):
		prefix := o.redisPrefix
		if prefix == "" {
			prefix = "agora-demo-" + suffix
		}
		opts, err := redis.ParseURL(o.store)
		if err != nil {
			return data{}, fmt.Errorf("-store: %w", err)
		}
		host, port, err := net.SplitHostPort(opts.Addr)
		if err != nil {
			return data{}, fmt.Errorf("-store: %w", err)
		}
		return data{
			backend: "redis", url: o.store, prefix: prefix,
			where: fmt.Sprintf("Redis keys {%s}:* and rate:{%s}:* at %s", prefix, prefix, opts.Addr),
			keep: fmt.Sprintf("kept after the demo: redis-cli -h %s -p %s --scan --pattern '*{%s}:*' | xargs redis-cli -h %[1]s -p %[2]s unlink removes them (or run with -clean)",
				host, port, prefix),
			drop: func(ctx context.Context) error {
				c := redis.NewClient(opts)
				defer c.Close()
				_, err := redisstore.New(c, redisstore.WithPrefix(prefix)).Drop(ctx)
				return err
			},
		}, nil
	case o.store == "memory" || o.store == "":
		return data{backend: "memory", url: "memory", where: "in this process's memory", keep: "gone when the demo ends",
			drop: func(context.Context) error { return nil }}, nil
	}
	return data{}, fmt.Errorf("-store %q: want memory, postgres://… or redis://…", o.store)
}

// onPostgres runs one statement on the database of dsn.
func onPostgres(ctx context.Context, dsn, statement string) error {
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return fmt.Errorf("-store: %w", err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, statement); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	return nil
}
