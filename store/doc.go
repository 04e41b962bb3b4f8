// Package store holds what every Agora storage backend shares: the sentinel
// errors that domain packages and backends return, the domain error type that
// carries a machine-readable code, the Notifier contract live views are
// built on, and the Unix-millisecond form the backends store the times of
// slots, identity and prism in (Millis, FromMillis, Milli).
//
// It imports nothing of Agora's, so domain packages (slots, prism, …), the
// backends (memstore, pgstore, redisstore) and httpapi can all depend on it
// without creating a cycle. docs/architecture.md says how the stores
// decide races and carry events; docs/operations.md what each backend
// keeps, and where.
package store
