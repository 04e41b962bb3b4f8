package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/agorahq/agora/store"
)

// errRateLimited is the kind of the error a Limiter refusal turns into.
var errRateLimited = errors.New("rate limited")

// rateLimitedError carries how long the caller should wait.
type rateLimitedError struct{ retryAfter time.Duration }

func (e *rateLimitedError) Error() string { return "rate limit exceeded; retry later" }
func (e *rateLimitedError) Unwrap() error { return errRateLimited }

// statusOf maps an error's kind to a status code and a fallback code.
var statusOf = []struct {
	kind   error
	status int
	code   string
}{
	{store.ErrInvalid, http.StatusBadRequest, "invalid_request"},
	{store.ErrUnauthorized, http.StatusUnauthorized, "unauthorized"},
	{store.ErrForbidden, http.StatusForbidden, "forbidden"},
	{store.ErrNotFound, http.StatusNotFound, "not_found"},
	{store.ErrConflict, http.StatusConflict, "conflict"},
	{errRateLimited, http.StatusTooManyRequests, "rate_limited"},
}

type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// writeError is the one place an error becomes a response. Domain errors
// answer as themselves; anything unexpected is logged and answered with a
// generic 500 that leaks nothing.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	var maxBytes *http.MaxBytesError
	var limited *rateLimitedError
	switch {
	case errors.As(err, &maxBytes):
		writeJSON(w, http.StatusRequestEntityTooLarge, errorBody{errorDetail{"payload_too_large", "request body is larger than " + strconv.FormatInt(maxBytes.Limit, 10) + " bytes"}})
		return
	case errors.As(err, &limited):
		secs := int64((limited.retryAfter + time.Second - 1) / time.Second)
		if secs < 1 {
			secs = 1
		}
		w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	case errors.Is(err, context.DeadlineExceeded), r.Context().Err() != nil:
		writeJSON(w, http.StatusServiceUnavailable, errorBody{errorDetail{"unavailable", "the request timed out or was cancelled"}})
		return
	}
	for _, m := range statusOf {
		if errors.Is(err, m.kind) {
			code := m.code
			var se *store.Error
			if errors.As(err, &se) && se.Code != "" {
				code = se.Code
			}
			writeJSON(w, m.status, errorBody{errorDetail{code, err.Error()}})
			return
		}
	}
	log.ErrorContext(r.Context(), "internal error", "method", r.Method, "path", r.URL.Path, "err", err)
	writeJSON(w, http.StatusInternalServerError, errorBody{errorDetail{"internal", "internal server error"}})
}
