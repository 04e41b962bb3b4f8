// Package httpjson is how every Agora HTTP handler speaks: JSON bodies
// read strictly and written one way, and the one function that turns an
// error into a response, so that every handler of httpapi answers alike.
// It imports nothing of Agora's but store and the wire shapes of its
// error answers (httpapi/wire).
package httpjson

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agorahq/agora/httpapi/wire"
	"github.com/agorahq/agora/store"
)

// ErrRateLimited is the kind of a RateLimited error.
var ErrRateLimited = errors.New("rate limited")

// RateLimited refuses a request over its rate limit; it is answered 429
// with Retry-After.
type RateLimited struct {
	RetryAfter time.Duration // answered in whole seconds, rounded up, at least 1
	// Code is the answer's error code; empty is "rate_limited". The
	// original's routes name their own (claim_create_limited,
	// comment_create_limited).
	Code string
}

// ErrorCode is e's code as answered.
func (e *RateLimited) ErrorCode() string {
	if e.Code == "" {
		return "rate_limited"
	}
	return e.Code
}

// Error implements error.
func (e *RateLimited) Error() string { return "rate limit exceeded; retry later" }

// Unwrap returns ErrRateLimited.
func (e *RateLimited) Unwrap() error { return ErrRateLimited }

// ErrRequestTimeout is the kind of an error reading a request body that
// did not arrive within the server's read deadline: the client's delay, not
// the server's, answered 408.
var ErrRequestTimeout = store.Errorf(store.ErrInvalid, "request_timeout", "the request body did not arrive in time")

// A StatusKind is one row of the table that maps an error's kind to the
// status it answers with and back: the server (WriteError, Describe)
// answers an error with the status of the first row whose kind it is, and
// the Go client (httpapi/client) reads a status back as that row's kind
// (KindOf), so both sides speak through the same rows.
type StatusKind struct {
	Kind   error // a sentinel of store (or ErrRateLimited), matched with errors.Is
	Status int   // the HTTP status an error of Kind answers with
	// Code is the error code answered when the error carries none of
	// its own (a store.Error's Code).
	Code string
	// Also lists the other statuses an error of Kind answers with: a body
	// too large (413), one that did not arrive in time (408).
	Also []int
}

// statuses is the one error table; see StatusKind. ErrGone comes before
// ErrConflict: a gone error is a conflict too.
var statuses = []StatusKind{
	{store.ErrInvalid, http.StatusBadRequest, "invalid_request", []int{http.StatusRequestEntityTooLarge, http.StatusRequestTimeout}},
	{store.ErrUnauthorized, http.StatusUnauthorized, "unauthorized", nil},
	{store.ErrForbidden, http.StatusForbidden, "forbidden", nil},
	{store.ErrNotFound, http.StatusNotFound, "not_found", nil},
	{store.ErrGone, http.StatusGone, "gone", nil},
	{store.ErrConflict, http.StatusConflict, "conflict", nil},
	{ErrRateLimited, http.StatusTooManyRequests, "rate_limited", nil},
	{store.ErrUnavailable, http.StatusServiceUnavailable, "unavailable", nil},
}

// Statuses returns a copy of the error table, in the order the server
// matches its rows.
func Statuses() []StatusKind { return slices.Clone(statuses) }

// KindOf is the kind of error an answer of status stands for, the inverse
// of the table WriteError answers with; nil for a status no kind answers
// with (a 500, a success).
func KindOf(status int) error {
	for _, s := range statuses {
		if s.Status == status || slices.Contains(s.Also, status) {
			return s.Kind
		}
	}
	return nil
}

// UnavailableRetryAfter is the Retry-After of a 503 answered because the
// store could not be reached: a database coming back is usually back within
// seconds.
const UnavailableRetryAfter = 2 * time.Second

// Body is the shape of every error answer (wire.Error): Agora's error
// object, and the message again as detail.
type Body = wire.Error

// ErrorBody returns the error answer with code and message.
func ErrorBody(code, message string) Body {
	return Body{Error: Detail{Code: code, Message: message}, Message: message}
}

// Detail says what went wrong: a stable code and a message for people.
type Detail = wire.Detail

// WriteError is the one place an error becomes a response. Domain errors
// answer as themselves; anything unexpected is logged and answered with a
// generic 500 that leaks nothing.
func WriteError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	var maxBytes *http.MaxBytesError
	var limited *RateLimited
	switch {
	case errors.As(err, &maxBytes):
		Write(w, http.StatusRequestEntityTooLarge, ErrorBody("payload_too_large", "request body is larger than "+strconv.FormatInt(maxBytes.Limit, 10)+" bytes"))
		return
	case errors.Is(err, ErrRequestTimeout):
		// Before the context's case: a stalled body is the client's
		// delay, not a server that timed out; the connection is done.
		w.Header().Set("Connection", "close")
		Write(w, http.StatusRequestTimeout, ErrorBody("request_timeout", ErrRequestTimeout.Error()))
		return
	case errors.As(err, &limited):
		secs := int64((limited.RetryAfter + time.Second - 1) / time.Second)
		if secs < 1 {
			secs = 1
		}
		w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
		Write(w, http.StatusTooManyRequests, ErrorBody(limited.ErrorCode(), limited.Error()))
		return
	case errors.Is(err, context.DeadlineExceeded), r.Context().Err() != nil:
		w.Header().Set("Retry-After", strconv.Itoa(int(UnavailableRetryAfter/time.Second)))
		Write(w, http.StatusServiceUnavailable, ErrorBody("unavailable", "the request timed out or was cancelled"))
		return
	case errors.Is(err, store.ErrUnavailable):
		// The driver's words name hosts and ports: logged, not answered.
		log.WarnContext(r.Context(), "store unavailable", "method", r.Method, "path", r.URL.Path, "err", err)
		w.Header().Set("Retry-After", strconv.Itoa(int(UnavailableRetryAfter/time.Second)))
		Write(w, http.StatusServiceUnavailable, ErrorBody("unavailable", "the store is unavailable; retry later"))
		return
	}
	for _, m := range statuses {
		if errors.Is(err, m.Kind) {
			code := m.Code
			var se *store.Error
			if errors.As(err, &se) && se.Code != "" {
				code = se.Code
			}
			Write(w, m.Status, ErrorBody(code, err.Error()))
			return
		}
	}
	log.ErrorContext(r.Context(), "internal error", "method", r.Method, "path", r.URL.Path, "err", err)
	Write(w, http.StatusInternalServerError, ErrorBody("internal", "internal server error"))
}

// MaxBodyBytes is the largest request body any route accepts.
const MaxBodyBytes = 1 << 20

// ErrorCodeHeader carries an error answer's code, as the Agent
// Orchestration Protocol's server sends it, for clients that read the
// code without the body.
const ErrorCodeHeader = "X-Aop-Error-Code"

// Write answers status with v as JSON; the code of an error body (one
// with an ErrorCode method, as wire.Error) is also sent in ErrorCodeHeader.
func Write(w http.ResponseWriter, status int, v any) {
	if e, ok := v.(interface{ ErrorCode() string }); ok && e.ErrorCode() != "" {
		w.Header().Set(ErrorCodeHeader, e.ErrorCode())
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		http.Error(w, `{"error":{"code":"internal","message":"internal server error"},"detail":"internal server error"}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// Invalid returns a store.ErrInvalid error with code and message.
func Invalid(code, format string, args ...any) error {
	return store.Errorf(store.ErrInvalid, code, format, args...)
}

// Decode reads exactly one JSON object into v, refusing trailing data, an
// empty body and bodies over MaxBodyBytes. Fields v does not have are
// ignored, as every original whose routes Agora serves ignores them, so
// that their clients' extra fields (AOP's agentName, for one)
// are no error.
func Decode(w http.ResponseWriter, r *http.Request, v any) error {
	return decode(w, r, v, true)
}

// DecodeOptional is Decode for routes whose body may be empty.
func DecodeOptional(w http.ResponseWriter, r *http.Request, v any) error {
	return decode(w, r, v, false)
}

func decode(w http.ResponseWriter, r *http.Request, v any, required bool) error {
	body := http.MaxBytesReader(w, r.Body, MaxBodyBytes)
	data, err := io.ReadAll(body)
	if err != nil {
		return bodyError(err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		if !required {
			return nil
		}
		return Invalid("invalid_json", "request body is empty; a JSON object is required")
	}
	if err := CheckJSONText(data); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		return Invalid("invalid_json", "request body is not valid: %s", describeJSONError(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Invalid("invalid_json", "request body has data after the JSON object")
	}
	return nil
}

// bodyError says why a request body could not be read, always as the
// client's doing: too large (413), not arrived within the read deadline
// (408), or broken framing or a connection cut mid-body (400). None is the
// server's fault, so none is a 5xx.
func bodyError(err error) error {
	var maxBytes *http.MaxBytesError
	var netErr net.Error
	switch {
	case errors.As(err, &maxBytes):
		return err
	case errors.As(err, &netErr) && netErr.Timeout():
		return ErrRequestTimeout
	}
	// The read error's words may name addresses: not answered.
	return Invalid("invalid_body", "the request body could not be read: its framing is malformed or the connection broke")
}

func describeJSONError(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("malformed JSON at byte %d", syn.Offset)
	case errors.As(err, &typ):
		if typ.Field != "" {
			return fmt.Sprintf("field %q must be %s, not %s", typ.Field, jsonKind(typ.Type.Kind().String()), typ.Value)
		}
		return fmt.Sprintf("expected %s, not %s", jsonKind(typ.Type.Kind().String()), typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "malformed JSON: unexpected end"
	}
	return err.Error()
}

func jsonKind(goKind string) string {
	switch goKind {
	case "struct", "map":
		return "an object"
	case "slice", "array":
		return "an array"
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	}
	return "a number"
}

// QueryInt parses an optional integer query parameter. Like IntField it
// takes no more than nine digits: every count, limit and layer fits, and a
// larger number would overflow a PostgreSQL integer column.
func QueryInt(r *http.Request, name string) (int, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > 1e9 || n < -1e9 {
		return 0, Invalid("invalid_"+name, "%s must be an integer from -1000000000 to 1000000000", name)
	}
	return n, nil
}

// WaitParam parses a long poll's "wait" query parameter, whole seconds from
// 0 to max. A HEAD request waits for nothing: its answer has no body to
// wait for, so it is 0 whatever the parameter says.
func WaitParam(r *http.Request, max time.Duration) (time.Duration, error) {
	wait, err := QueryInt(r, "wait")
	if err != nil {
		return 0, err
	}
	if wait < 0 || wait > int(max/time.Second) {
		return 0, Invalid("invalid_wait", "wait must be from 0 to %d seconds", int(max/time.Second))
	}
	if r.Method == http.MethodHead {
		return 0, nil
	}
	return time.Duration(wait) * time.Second, nil
}

// IntField parses a JSON value that must be an integer (2 or 2.0, never "2"
// or 2.5).
func IntField(name string, raw json.RawMessage) (int, error) {
	raw = bytes.TrimSpace(raw)
	f, err := strconv.ParseFloat(string(raw), 64)
	if len(raw) == 0 || raw[0] == '"' || err != nil || f != float64(int64(f)) || f > 1e9 || f < -1e9 {
		return 0, Invalid("invalid_count", "%s must be an integer", name)
	}
	return int(f), nil
}

// OptionalInt parses an optional integer field: absent or null is nil.
func OptionalInt(name string, raw json.RawMessage) (*int, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	n, err := IntField(name, raw)
	if err != nil {
		return nil, Invalid("invalid_"+name, "%s must be an integer", name)
	}
	return &n, nil
}

// Router is a ServeMux whose every answer, unknown routes and wrong methods
// included, is JSON, and whose handlers return errors for WriteError.
//
// It refuses, before any handler runs, a request a browser sent from
// another site to change something (CrossOrigin: a POST from someone
// else's page, which a browser sends without asking first when its body is
// text/plain, and with the user's cookies), one whose path or query
// breaks the text rule (text.go), and one whose Content-Length is over
// MaxBodyBytes (413, on every route, those that read no body included).
// Clients that are not browsers send no Sec-Fetch-Site or Origin header
// and are not affected by the first.
type Router struct {
	Log *slog.Logger // where unexpected errors and store outages are logged; not nil
	// CrossOrigin decides which cross-origin browser requests are
	// refused; by default every unsafe one (no trusted origins). A host
	// that serves a page from another origin adds it as trusted.
	CrossOrigin *http.CrossOriginProtection
	mux         *http.ServeMux
	patterns    map[string][]string // path pattern -> methods, of Handle
	raw         map[string][]string // the same, of HandleRaw's patterns that name a method
}

// NewRouter returns an empty Router logging unexpected errors to log.
func NewRouter(log *slog.Logger) *Router {
	rt := &Router{Log: log, CrossOrigin: http.NewCrossOriginProtection(), mux: http.NewServeMux(), patterns: map[string][]string{}, raw: map[string][]string{}}
	rt.mux.HandleFunc("/", rt.notFound)
	return rt
}

// ServeHTTP implements http.Handler.
func (rt *Router) ServeHTTP(w http.ResponseWriter, r *http.Request) { rt.mux.ServeHTTP(w, r) }

// Handle routes method and path (a ServeMux pattern path) to fn; an error
// fn returns is answered by WriteError.
func (rt *Router) Handle(method, path string, fn func(w http.ResponseWriter, r *http.Request) error) {
	rt.patterns[path] = append(rt.patterns[path], method)
	pattern := method + " " + path
	rt.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		notePattern(r.Context(), pattern)
		err := checkURL(r)
		if err == nil && r.ContentLength > MaxBodyBytes {
			// Refused before the route runs, whether or not it reads a
			// body, and without waiting for a body it would not read.
			err = &http.MaxBytesError{Limit: MaxBodyBytes}
		}
		if err == nil && rt.CrossOrigin != nil {
			if rt.CrossOrigin.Check(r) != nil {
				err = store.Errorf(store.ErrForbidden, "cross_origin", "a browser request from another site may not change anything here")
			}
		}
		if err == nil {
			err = fn(w, r)
		}
		if err != nil {
			WriteError(w, r, rt.Log, err)
		}
	})
}

// Routes lists the "METHOD /path" patterns Handle registered, sorted: what
// a sweep over every route, an API document or a front door lists.
func (rt *Router) Routes() []string {
	var out []string
	for path, methods := range rt.patterns {
		for _, m := range methods {
			out = append(out, m+" "+path)
		}
	}
	slices.Sort(out)
	return out
}

// HandleRaw routes a full ServeMux pattern to a plain handler (pages,
// files). A pattern that names a method ("GET /page") is one the Router's
// 405 lists for its path.
func (rt *Router) HandleRaw(pattern string, h http.Handler) {
	if method, path, ok := strings.Cut(pattern, " "); ok {
		rt.raw[path] = append(rt.raw[path], method)
	}
	rt.mux.Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		notePattern(r.Context(), pattern)
		h.ServeHTTP(w, r)
	}))
}

// Unmatched is the pattern a RequestInfo reports for a request no route
// matched, so that a metric's route label stays one of a known few.
const Unmatched = "unmatched"

// notFound answers every request no pattern matched: 405 with Allow when the
// path exists under other methods, else 404.
func (rt *Router) notFound(w http.ResponseWriter, r *http.Request) {
	notePattern(r.Context(), Unmatched)
	var allow []string
	probe := r.Clone(r.Context())
	for _, patterns := range []map[string][]string{rt.patterns, rt.raw} {
		for path, methods := range patterns {
			for _, m := range methods {
				probe.Method = m
				if _, p := rt.mux.Handler(probe); p == m+" "+path {
					allow = append(allow, m)
				}
			}
		}
	}
	if len(allow) > 0 {
		slices.Sort(allow)
		allow = slices.Compact(allow)
		w.Header().Set("Allow", strings.Join(allow, ", "))
		Write(w, http.StatusMethodNotAllowed, ErrorBody("method_not_allowed", r.Method+" is not allowed here; use "+strings.Join(allow, ", ")))
		return
	}
	Write(w, http.StatusNotFound, ErrorBody("route_not_found", "no route for "+r.Method+" "+r.URL.Path))
}

// KeepAlive is how often Stream writes a comment to keep an idle event
// stream open through proxies.
const KeepAlive = 15 * time.Second

// StreamWriteTimeout is how long one write of an event stream may wait for
// a client that does not read before the stream is ended.
const StreamWriteTimeout = 30 * time.Second

// Stream answers with a server-sent event stream. It calls send at once
// and then after every hint on hints (nil for none), passing the hint — and
// every poll, when poll is not zero, with a nil hint, as a safety net for a
// hint that was lost — flushing after each call and writing a keep-alive
// comment every KeepAlive. It returns when the request ends, the hints
// stop, or send fails (the stream has started: the client reconnects).
//
// A HEAD request is answered with the headers alone. A stream is exempt from
// the server's read and write timeouts, which bound ordinary requests;
// instead each write must reach the client within StreamWriteTimeout, so a
// client that stops reading is hung up on rather than held forever.
func Stream(w http.ResponseWriter, r *http.Request, hints <-chan []byte, poll time.Duration, send func(w io.Writer, hint []byte) error) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{}) // errors: the writer cannot; nothing to lift
	flush := func() {
		_ = rc.SetWriteDeadline(time.Now().Add(StreamWriteTimeout))
		_ = rc.Flush()
	}
	heartbeat := time.NewTicker(KeepAlive)
	defer heartbeat.Stop()
	var tick <-chan time.Time
	if poll > 0 {
		t := time.NewTicker(poll)
		defer t.Stop()
		tick = t.C
	}
	var hint []byte
	for {
		_ = rc.SetWriteDeadline(time.Now().Add(StreamWriteTimeout))
		if send(w, hint) != nil {
			return
		}
		flush()
		hint = nil
		for woke := false; !woke; {
			select {
			case <-r.Context().Done():
				return
			case <-heartbeat.C:
				_ = rc.SetWriteDeadline(time.Now().Add(StreamWriteTimeout))
				if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
					return
				}
				flush()
			case h, ok := <-hints:
				if !ok {
					return
				}
				hint, woke = h, true
			case <-tick:
				woke = true
			}
		}
	}
}
