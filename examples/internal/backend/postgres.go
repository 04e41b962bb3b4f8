package backend

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/agorahq/agora/store/pgstore"
)

// openPostgres connects, makes the schema the DSN's search_path names when
// it is missing (as the demo does), and migrates, logging the migrations it
// applied. Several servers may start at once on one database: Migrate
// serialises them.
func openPostgres(ctx context.Context, c Config) (_ *Backend, err error) {
	dsn := c.URL
	db, err := pgstore.Open(dsn, pgstore.PoolOptions{MaxOpenConns: c.MaxConns, CallTimeout: c.Timeout})
	if err != nil {
		return nil, fmt.Errorf("-store: %w", err)
	}
	defer func() {
		if err != nil {
			db.Close()
		}
	}()
	if err := db.PingContext(ctx); err != nil {
		return nil, fmt.Errorf("-store: %w", err)
	}
	if err := createSchema(ctx, db, dsn, c.Log); err != nil {
		return nil, err
	}
	// Migrations run on a pool of their own whose reads may wait long: a
	// migration on a big table, or the wait for another server's, outlasts
	// -store-timeout, which bounds the serving pool's every read.
	mdb, err := pgstore.Open(dsn, pgstore.PoolOptions{MaxOpenConns: 1, CallTimeout: migrationCallTimeout})
	if err != nil {
		return nil, fmt.Errorf("-store: %w", err)
	}
	err = migrate(ctx, mdb, c.Log)
	mdb.Close()
	if err != nil {
		return nil, err
	}
	n, err := pgstore.NewNotifier(ctx, db, dsn)
	if err != nil {
		return nil, err
	}
	st := pgstore.New(db)
	return &Backend{
		Name: "postgres", Slots: st, Identity: st, Discussion: st, Prism: st, Arena: st, AgentChat: st, Notifier: n, Limiter: st.Limiter(c.Rate, c.Burst), Ping: st.Ping,
		Close: func() { n.Close(); db.Close() },
	}, nil
}

// migrationCallTimeout bounds each read of the migrations' pool.
const migrationCallTimeout = time.Hour

// migrate applies pgstore's migrations and logs which it applied, or that
// the schema was up to date.
func migrate(ctx context.Context, db *sqlx.DB, log *slog.Logger) error {
	before, err := appliedMigrations(ctx, db)
	if err != nil {
		return err
	}
	if err := pgstore.Migrate(ctx, db); err != nil {
		return err
	}
	after, err := appliedMigrations(ctx, db)
	if err != nil {
		return err
	}
	var applied []string
	for _, m := range after {
		if !slices.Contains(before, m) {
			applied = append(applied, m)
		}
	}
	if len(applied) == 0 {
		log.Info("schema up to date", "migrations", len(after))
		return nil
	}
	log.Info("migrations applied", "count", len(applied), "first", applied[0], "last", applied[len(applied)-1])
	return nil
}

// searchPathSchema is the first schema the DSN's search_path names, or ""
// when it names none ($user and public need no making).
func searchPathSchema(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return ""
	}
	first, _, _ := strings.Cut(u.Query().Get("search_path"), ",")
	first = strings.Trim(strings.TrimSpace(first), `"`)
	if first == "" || first == "$user" || first == "public" {
		return ""
	}
	return first
}

// createSchema makes the schema the DSN's search_path names when it is
// missing: the tables are made there, and PostgreSQL would otherwise
// refuse the first migration with "no schema has been selected".
func createSchema(ctx context.Context, db *sqlx.DB, dsn string, log *slog.Logger) error {
	schema := searchPathSchema(dsn)
	if schema == "" {
		return nil
	}
	var exists bool
	if err := db.GetContext(ctx, &exists, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, schema); err != nil {
		return fmt.Errorf("-store: schema %s: %w", schema, err)
	}
	if exists {
		return nil
	}
	if _, err := db.ExecContext(ctx, "CREATE SCHEMA IF NOT EXISTS "+pq.QuoteIdentifier(schema)); err != nil {
		return fmt.Errorf("-store: creating schema %s named in search_path: %w", schema, err)
	}
	log.Info("schema created", "schema", schema)
	return nil
}

// appliedMigrations lists the names of the migrations the database records
// as applied, none before the first Migrate.
func appliedMigrations(ctx context.Context, db *sqlx.DB) ([]string, error) {
	var table *string
	if err := db.GetContext(ctx, &table, `SELECT to_regclass('agora_migrations')::text`); err != nil {
		return nil, fmt.Errorf("-store: reading the applied migrations: %w", err)
	}
	if table == nil {
		return nil, nil
	}
	var names []string
	if err := db.SelectContext(ctx, &names, `SELECT name FROM agora_migrations ORDER BY version`); err != nil {
		return nil, fmt.Errorf("-store: reading the applied migrations: %w", err)
	}
	return names, nil
}
