package pgstore

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/jmoiron/sqlx"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrations holds the schema as numbered SQL files (001_slots.sql, …), for
// users who run migrations with their own tool. Migrate applies them.
var Migrations fs.FS = mustSub(migrationFiles, "migrations")

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err) // the embedded directory exists: a build without it cannot happen
	}
	return sub
}

// migrationLock is the pg_advisory_xact_lock key Migrate holds, so that
// servers starting together apply each migration once.
const migrationLock = 0x61676f7261 // "agora"

type migration struct {
	version int
	name    string
	sql     string
}

func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(Migrations, ".")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || !strings.HasSuffix(e.Name(), ".sql") {
			return nil, fmt.Errorf("pgstore: migration %q is not named NNN_name.sql", e.Name())
		}
		b, err := fs.ReadFile(Migrations, e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: e.Name(), sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
}

// Migrate brings the schema of db's current search path up to date. Each
// migration runs in its own transaction holding an advisory lock and is
// recorded in agora_migrations, so Migrate is idempotent and safe when
// several processes call it at once. A migration on a big table, or the
// wait for another process's, can outlast a pool's CallTimeout: give
// Migrate a pool of its own with a long one.
func Migrate(ctx context.Context, db *sqlx.DB) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	for _, m := range ms {
		if err := apply(ctx, db, m); err != nil {
			// interpretError's answer already says "pgstore: ": say it once.
			return &migrationError{name: m.name, err: interpretError(ctx, err)}
		}
	}
	return nil
}

func apply(ctx context.Context, db *sqlx.DB, m migration) error {
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS agora_migrations (
		version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return err
	}
	var done bool
	if err := tx.GetContext(ctx, &done, `SELECT EXISTS (SELECT 1 FROM agora_migrations WHERE version = $1)`, m.version); err != nil {
		return err
	}
	if done {
		return tx.Commit()
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO agora_migrations (version, name) VALUES ($1, $2)`, m.version, m.name); err != nil {
		return err
	}
	return tx.Commit()
}

// migrationError is a migration that failed: "pgstore: migration NAME:
// CAUSE", with the cause's own "pgstore: " left out; errors.Is and
// errors.As see the cause.
type migrationError struct {
	name string
	err  error
}

func (e *migrationError) Error() string {
	return "pgstore: migration " + e.name + ": " + strings.TrimPrefix(e.err.Error(), "pgstore: ")
}

func (e *migrationError) Unwrap() error { return e.err }
