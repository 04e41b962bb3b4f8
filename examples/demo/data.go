package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/lib/pq" // the PostgreSQL driver, as pgstore uses it
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
		if err := claimSchema(ctx, o.store, schema, o.clean); err != nil {
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
		if err := claimPrefix(ctx, opts, prefix); err != nil {
			return data{}, err
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

// errNotOwn refuses a place that held data before the demo started: the
// demo's keys would meet keys of the same names there, and -clean would
// remove what the demo did not make.
var errNotOwn = errors.New("the demo keeps its data in a place of its own, which -clean removes whole; leave -schema and -redis-prefix out for a fresh one")

// claimSchema makes schema the demo's: it creates it, or — without clean —
// takes an existing one that holds nothing. With clean the schema must not
// exist yet, since -clean drops the schema and only one the demo made may
// be dropped.
func claimSchema(ctx context.Context, dsn, schema string, clean bool) error {
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return fmt.Errorf("-store: %w", err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_, err = db.ExecContext(ctx, "CREATE SCHEMA "+schema)
	var pe *pq.Error
	switch {
	case err == nil:
		return nil
	case !errors.As(err, &pe) || pe.Code != "42P06": // duplicate_schema
		return fmt.Errorf("postgres: %w", err)
	case clean:
		return fmt.Errorf("-schema %s exists, and -clean drops only a schema the demo creates: %w", schema, errNotOwn)
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1`, schema).Scan(&n); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	if n > 0 {
		return fmt.Errorf("-schema %s already holds %d tables, indexes or sequences: %w", schema, n, errNotOwn)
	}
	return nil
}

// claimPrefix makes prefix the demo's: no key may be under it yet.
func claimPrefix(ctx context.Context, opts *redis.Options, prefix string) error {
	c := redis.NewClient(opts)
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	empty, err := redisstore.New(c, redisstore.WithPrefix(prefix)).Empty(ctx)
	if err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	if !empty {
		return fmt.Errorf("-redis-prefix %s already holds keys: %w", prefix, errNotOwn)
	}
	return nil
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
