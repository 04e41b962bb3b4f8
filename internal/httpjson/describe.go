package httpjson

import (
	"context"
	"errors"

	"github.com/agorahq/agora/store"
)

// Describe says what an error answers on the HTTP API without writing a
// response, for the edges that speak another protocol over the same
// services (the MCP tools): the status code and the error object WriteError
// would write. known is false for an error WriteError logs as internal;
// the detail is then the generic one, which leaks nothing.
func Describe(err error) (status int, d Detail, known bool) {
	var limited *RateLimited
	switch {
	case errors.As(err, &limited):
		return 429, Detail{Code: limited.ErrorCode(), Message: limited.Error()}, true
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return 503, Detail{Code: "unavailable", Message: "the request timed out or was cancelled"}, true
	case errors.Is(err, store.ErrUnavailable):
		return 503, Detail{Code: "unavailable", Message: "the store is unavailable; retry later"}, true
	}
	for _, m := range statuses {
		if !errors.Is(err, m.Kind) {
			continue
		}
		d := Detail{Code: m.Code, Message: err.Error()}
		if se := (*store.Error)(nil); errors.As(err, &se) && se.Code != "" {
			d.Code = se.Code
		}
		return m.Status, d, true
	}
	return 500, Detail{Code: "internal", Message: "internal server error"}, false
}
