// Package pgstore is Agora's PostgreSQL backend, on sqlx and lib/pq.
//
// The schema comes as embedded, numbered migrations (Migrations), applied by
// Migrate. Every race is decided by PostgreSQL: a take is one conditional
// UPDATE with a unique index enforcing one seat per agent per claim; a done
// and its ledger credit are one statement; changes that span rows run in one
// transaction holding the row's lock. The job queue reads partial indexes of
// open slots only, so its cost does not grow with the number of claims.
// Notifier carries events between processes with LISTEN/NOTIFY.
package pgstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/agorahq/agora/discussion"
	"github.com/agorahq/agora/identity"
	"github.com/agorahq/agora/slots"
	"github.com/agorahq/agora/store"
)

// Store implements every domain's store interface on PostgreSQL. It keeps no
// state besides the pool, so any number of processes may share a database.
type Store struct {
	db *sqlx.DB

	mu    sync.Mutex
	stmts map[string]*sqlx.Stmt
}

var (
	_ slots.Store      = (*Store)(nil)
	_ identity.Store   = (*Store)(nil)
	_ discussion.Store = (*Store)(nil)
	_ store.Parallel   = (*Store)(nil)
)

// New returns a store on db, whose schema Migrate has brought up to date.
// The caller keeps ownership of db.
func New(db *sqlx.DB) *Store { return &Store{db: db, stmts: map[string]*sqlx.Stmt{}} }

// Parallelism implements store.Parallel: the pool's bound on open
// connections, the most statements this store runs at once (0 for an
// unbounded pool). A Service's batches in flight then grow only while
// the pool has room for them.
func (s *Store) Parallelism() int { return s.db.Stats().MaxOpenConnections }

// prepared returns query as a prepared statement, preparing it once. Hot
// paths (take, done, the job queue) use it: lib/pq sends a query with
// arguments in two round trips (parse and describe, then bind and execute),
// a prepared statement in one; database/sql prepares it again on each new
// connection of the pool by itself.
func (s *Store) prepared(ctx context.Context, query string) (*sqlx.Stmt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.stmts[query]; ok {
		return st, nil
	}
	st, err := s.db.PreparexContext(ctx, query)
	if err != nil {
		return nil, interpretError(ctx, err)
	}
	s.stmts[query] = st
	return st, nil
}

// get runs a one-row query as a prepared statement: one round trip.
func (s *Store) get(ctx context.Context, dest any, query string, args ...any) error {
	stmt, err := s.prepared(ctx, query)
	if err != nil {
		return err
	}
	return stmt.GetContext(ctx, dest, args...)
}

// DB returns the pool the store runs on.
func (s *Store) DB() *sqlx.DB { return s.db }

// interpretError is the one place driver errors become Agora's. Callers map
// sql.ErrNoRows and unique violations to their operation's own errors first;
// here a failure while ctx is done keeps the context's error in the chain
// (lib/pq reports a cancelled query as its own error), and anything else is
// wrapped with the package name.
func interpretError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		return fmt.Errorf("pgstore: %w (%v)", ctxErr, err)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if unreachable(err) {
		return fmt.Errorf("pgstore: %w: %w", store.ErrUnavailable, err)
	}
	return fmt.Errorf("pgstore: %w", err)
}

// unreachable reports an error that says nothing about the request, only
// that the database could not be reached or did not answer: a refused or
// cut connection, a read past the call deadline (Open), a server shutting
// down, starting up or out of connections.
func unreachable(err error) bool {
	var pe *pq.Error
	if errors.As(err, &pe) {
		switch pe.Code {
		case "57P01", "57P02", "57P03", "53300": // shutdown, crash shutdown, cannot connect now, too many connections
			return true
		}
		return pe.Code.Class() == "08" // connection exception
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// isUniqueViolation reports a unique-index violation, optionally of the
// named constraint.
func isUniqueViolation(err error, constraint string) bool {
	var pe *pq.Error
	return errors.As(err, &pe) && pe.Code == "23505" && (constraint == "" || pe.Constraint == constraint)
}

func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// Analyze vacuums Agora's tables and refreshes the planner's statistics.
// Autovacuum does both in a running system, some time after a bulk load.
// The job queue's oldest-first picks read their indexes in order whatever
// the statistics say (migration 030, TestJobQueuePlanWithStaleStatistics);
// the domain-only and random picks still plan by them, so call Analyze
// after a bulk load that those serve.
func (s *Store) Analyze(ctx context.Context) error {
	_, err := s.db.ExecContext(ctx, `VACUUM (ANALYZE) agora_claims, agora_comments, agora_role_slots, agora_prompts, agora_pipelines, agora_stage_work`)
	return interpretError(ctx, err)
}

// execOne runs a statement that changes one row, and returns missing when
// it changed none (the row it names does not exist).
func (s *Store) execOne(ctx context.Context, missing error, query string, args ...any) error {
	res, err := s.db.ExecContext(ctx, query, args...)
	if err != nil {
		return interpretError(ctx, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return interpretError(ctx, err)
	}
	if n == 0 {
		return missing
	}
	return nil
}
