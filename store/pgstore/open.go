package pgstore

import (
	"context"
	"database/sql"
	"net"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Pool sizes and deadlines Open uses when PoolOptions leaves them zero.
const (
	DefaultMaxOpenConns = 50
	DefaultCallTimeout  = 10 * time.Second
)

// PoolOptions configure the pool Open returns.
type PoolOptions struct {
	// MaxOpenConns bounds the pool (default DefaultMaxOpenConns).
	MaxOpenConns int
	// MaxIdleConns is how many connections stay open while idle. The
	// default keeps every connection (MaxOpenConns): database/sql's own
	// default of 2 makes a busy server close and reopen connections, each
	// a new PostgreSQL backend process, all the time.
	MaxIdleConns int
	// CallTimeout bounds how long the store waits for the database on one
	// connection: a read or write that makes no progress for this long
	// fails, the connection is dropped and the call answers
	// store.ErrUnavailable (default DefaultCallTimeout). A context deadline
	// alone cannot do it: lib/pq cancels a query by asking the server, and
	// a paused or unreachable server never answers. It must be longer than
	// any wait for a row lock the store's statements can meet.
	CallTimeout time.Duration
}

// Open returns a pool on dsn sized and bounded by o, for New and Migrate.
// A host may open its own *sqlx.DB instead; it then sets the pool's sizes
// and lives with lib/pq's unbounded reads.
func Open(dsn string, o PoolOptions) (*sqlx.DB, error) {
	if o.MaxOpenConns <= 0 {
		o.MaxOpenConns = DefaultMaxOpenConns
	}
	if o.MaxIdleConns <= 0 || o.MaxIdleConns > o.MaxOpenConns {
		o.MaxIdleConns = o.MaxOpenConns
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	c, err := pq.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	c.Dialer(deadlineDialer{dialer: net.Dialer{Timeout: o.CallTimeout, KeepAlive: 30 * time.Second}, timeout: o.CallTimeout})
	db := sqlx.NewDb(sql.OpenDB(c), "postgres")
	db.SetMaxOpenConns(o.MaxOpenConns)
	db.SetMaxIdleConns(o.MaxIdleConns)
	return db, nil
}

// deadlineDialer opens connections whose every read and write must make
// progress within timeout.
type deadlineDialer struct {
	dialer  net.Dialer
	timeout time.Duration
}

func (d deadlineDialer) Dial(network, addr string) (net.Conn, error) {
	return d.DialContext(context.Background(), network, addr)
}

func (d deadlineDialer) DialTimeout(network, addr string, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return d.DialContext(ctx, network, addr)
}

func (d deadlineDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := d.dialer.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &deadlineConn{Conn: c, timeout: d.timeout}, nil
}

// deadlineConn moves its deadline forward before each read and write, so an
// idle pooled connection never expires but a call waiting on a silent
// server fails after timeout.
type deadlineConn struct {
	net.Conn
	timeout time.Duration
}

func (c *deadlineConn) Read(b []byte) (int, error) {
	if err := c.Conn.SetReadDeadline(time.Now().Add(c.timeout)); err != nil {
		return 0, err
	}
	return c.Conn.Read(b)
}

func (c *deadlineConn) Write(b []byte) (int, error) {
	if err := c.Conn.SetWriteDeadline(time.Now().Add(c.timeout)); err != nil {
		return 0, err
	}
	return c.Conn.Write(b)
}
