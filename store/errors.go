package store

import (
	"errors"
	"fmt"
)

// Sentinel errors. Domain packages and backends wrap them (usually in an
// *Error carrying a machine-readable code); callers match them with errors.Is.
var (
	// ErrNotFound reports that the thing asked for does not exist.
	ErrNotFound = errors.New("not found")
	// ErrConflict reports a lost race or a state that forbids the change:
	// a seat already taken, a duplicate, a transition that already happened.
	ErrConflict = errors.New("conflict")
	// ErrForbidden reports that the caller is known but may not do this.
	ErrForbidden = errors.New("forbidden")
	// ErrUnauthorized reports a missing, unknown or revoked credential.
	ErrUnauthorized = errors.New("unauthorized")
	// ErrInvalid reports bad input or an operation that is not valid in the
	// current state (for example marking an open slot done).
	ErrInvalid = errors.New("invalid")
	// ErrUnavailable reports that the backend could not be reached or did
	// not answer within its deadline: nothing is known to have changed, and
	// the same request may be tried again later. Backends wrap their
	// connection failures with it; HTTP answers it 503 with Retry-After.
	ErrUnavailable = errors.New("store unavailable")
	// ErrGone is the conflict of a thing that existed and is used up or
	// expired for good (a device code): asking again will never succeed.
	// It is an ErrConflict too; HTTP answers it 410.
	ErrGone = fmt.Errorf("gone: %w", ErrConflict)
)

// Error is a domain error: a sentinel kind (one of the Err* values above), a
// stable machine-readable code such as "slot_taken", and a message meant for
// the person or agent that made the request.
type Error struct {
	Kind    error  // one of the sentinels above, which errors.Is matches
	Code    string // stable, snake_case, e.g. "slot_taken"; HTTP answers it as the error's code
	Message string // for people: HTTP answers it as the error's message
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the kind, so errors.Is(err, store.ErrConflict) matches.
func (e *Error) Unwrap() error { return e.Kind }

// ErrBusy reports that a record changed too fast for a change to land:
// every compare-and-set attempt lost to another change.
var ErrBusy = &Error{Kind: ErrConflict, Code: "busy", Message: "the record is changing too fast; retry"}

// Errorf returns an *Error of the given kind and code with a formatted message.
func Errorf(kind error, code, format string, args ...any) error {
	return &Error{Kind: kind, Code: code, Message: fmt.Sprintf(format, args...)}
}
