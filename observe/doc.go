// Package observe makes Agora visible to its operator: a structured
// request log, Prometheus metrics and OpenTelemetry spans, each configured
// by the host and nothing of it global.
//
//   - Handler wraps a host's whole http.Handler: one log/slog line per
//     request (method, the route's pattern, status, duration, bytes, the
//     API key's ID, a request ID honoured from X-Request-Id or made up and
//     returned), HTTP metrics by route pattern, and a server span per
//     request named after the route.
//   - NewServices is every domain Service's Observer: a span per service
//     call, ended with the call's outcome (an error only for a failure on
//     the server's side), and the domains' events (Prism layers and flags, arena actions
//     and games, long polls) as metrics.
//   - LogHandler wraps a slog.Handler so that every line logged with a
//     request's context (every error line of httpapi) carries its request
//     ID and trace ID.
//   - NewMetrics registers Agora's metrics on a prometheus.Registerer the
//     host passes in; the host serves them with promhttp.HandlerFor.
//   - Stores wraps every domain's store so that each call is counted and
//     timed by backend and operation, and is a child span of the request's.
//   - TracerProviderFromEnv builds a tracer provider from the standard
//     OTEL_* environment variables.
//
// docs/observability.md lists every metric and what to alert on.
package observe
