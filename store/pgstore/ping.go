package pgstore

import "context"

// Ping reports whether the database answers, as GET /healthz asks
// (httpapi.HealthHandler): nil when it does, else an error wrapping
// store.ErrUnavailable (or the context's error).
func (s *Store) Ping(ctx context.Context) error {
	return interpretError(ctx, s.db.PingContext(ctx))
}
