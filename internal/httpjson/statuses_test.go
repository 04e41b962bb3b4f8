package httpjson_test

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/internal/httpjson"
	"github.com/agorahq/agora/store"
)

// TestStatusTableBothWays walks the error table: an error of each kind is
// answered with its row's status, and that status (and each of the row's
// other statuses) reads back as the same kind.
func TestStatusTableBothWays(t *testing.T) {
	rows := httpjson.Statuses()
	require.NotEmpty(t, rows)
	kinds := []error{store.ErrInvalid, store.ErrUnauthorized, store.ErrForbidden, store.ErrNotFound, store.ErrGone,
		store.ErrConflict, store.ErrUnavailable, httpjson.ErrRateLimited}
	for _, kind := range kinds {
		require.True(t, containsKind(rows, kind), "%v has a row", kind)
	}
	for _, row := range rows {
		t.Run(http.StatusText(row.Status), func(t *testing.T) {
			rec := httptest.NewRecorder()
			err := fmt.Errorf("somewhere: %w", row.Kind)
			httpjson.WriteError(rec, httptest.NewRequest("GET", "/x", nil), slog.New(slog.DiscardHandler), err)
			require.Equal(t, row.Status, rec.Code, "the server answers %v with its row's status", row.Kind)
			status, _, known := httpjson.Describe(err)
			require.True(t, known)
			require.Equal(t, row.Status, status, "Describe says what WriteError answers")
			require.Same(t, row.Kind, httpjson.KindOf(row.Status), "the status reads back as the kind")
			for _, also := range row.Also {
				require.Same(t, row.Kind, httpjson.KindOf(also), "%d reads back as %v", also, row.Kind)
			}
		})
	}
	// The statuses WriteError answers without a row's kind read back as
	// the kind of the error that caused them.
	rec := httptest.NewRecorder()
	httpjson.WriteError(rec, httptest.NewRequest("GET", "/x", nil), slog.New(slog.DiscardHandler), httpjson.ErrRequestTimeout)
	require.True(t, errors.Is(httpjson.ErrRequestTimeout, httpjson.KindOf(rec.Code)), "%d", rec.Code)
	rec = httptest.NewRecorder()
	httpjson.WriteError(rec, httptest.NewRequest("GET", "/x", nil), slog.New(slog.DiscardHandler), &http.MaxBytesError{Limit: 1})
	require.Same(t, store.ErrInvalid, httpjson.KindOf(rec.Code), "%d", rec.Code)
	require.Nil(t, httpjson.KindOf(http.StatusInternalServerError))
	require.Nil(t, httpjson.KindOf(http.StatusOK))
}

func containsKind(rows []httpjson.StatusKind, kind error) bool {
	for _, r := range rows {
		if r.Kind == kind {
			return true
		}
	}
	return false
}
