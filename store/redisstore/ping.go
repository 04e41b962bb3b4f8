package redisstore

import "context"

// Ping reports whether Redis answers, as GET /healthz asks
// (httpapi.HealthHandler): nil when it does, else an error wrapping
// store.ErrUnavailable (or the context's error).
func (s *Store) Ping(ctx context.Context) error {
	return interpretError(ctx, s.client.Ping(ctx).Err(), nil)
}
