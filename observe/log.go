package observe

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"go.opentelemetry.io/otel/trace"

	"github.com/agorahq/agora/internal/httpjson"
)

// RequestID returns the request ID Handler gave the request whose context
// ctx is, or "" outside one.
func RequestID(ctx context.Context) string {
	if ri := httpjson.RequestInfoFrom(ctx); ri != nil {
		return ri.RequestID
	}
	return ""
}

// LogHandler wraps h so that every record logged with a context inside a
// request served by Handler carries that request's request_id, and, when
// the request is traced, its trace_id: an error line can be matched with
// the request's own line and its trace.
func LogHandler(h slog.Handler) slog.Handler { return contextHandler{h} }

type contextHandler struct{ slog.Handler }

// Handle implements slog.Handler.
func (h contextHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	if sc := trace.SpanContextFromContext(ctx); sc.HasTraceID() {
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (h contextHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return contextHandler{h.Handler.WithAttrs(as)}
}

// WithGroup implements slog.Handler.
func (h contextHandler) WithGroup(name string) slog.Handler {
	return contextHandler{h.Handler.WithGroup(name)}
}

// NewLogger returns a logger writing to w in format, "text" (slog's
// key=value lines) or "json" (one JSON object a line), from level up,
// wrapped in LogHandler.
func NewLogger(w io.Writer, format string, level slog.Leveler) (*slog.Logger, error) {
	opts := &slog.HandlerOptions{Level: level}
	switch format {
	case "", "text":
		return slog.New(LogHandler(slog.NewTextHandler(w, opts))), nil
	case "json":
		return slog.New(LogHandler(slog.NewJSONHandler(w, opts))), nil
	}
	return nil, fmt.Errorf("log format %q: want text or json", format)
}
