package text_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/internal/text"
	"github.com/agorahq/agora/store"
)

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		s        string
		required bool
		ok       bool
	}{
		{"hello", true, true},
		{"", false, true},
		{"  ", false, true},
		{"", true, false},
		{" \t", true, false},
		{"\xff", false, false},
		{"a\x00b", false, false},
		{strings.Repeat("é", 5), true, true},
		{strings.Repeat("é", 6), true, false},
	} {
		err := text.Check("name", c.s, c.required, 5)
		if c.ok {
			require.NoError(t, err, "%q", c.s)
			continue
		}
		require.True(t, errors.Is(err, store.ErrInvalid), "%q: %v", c.s, err)
		var se *store.Error
		require.True(t, errors.As(err, &se))
		require.Equal(t, "invalid_name", se.Code)
	}
	got, err := text.Trimmed("name", "  Alice \n", true, 5)
	require.NoError(t, err)
	require.Equal(t, "Alice", got)
	_, err = text.Trimmed("name", "   ", true, 5)
	require.Error(t, err)
}

func FuzzCheck(f *testing.F) {
	for _, s := range []string{"", "a", "\xff", "a\x00", "ééé"} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, required bool) {
		err := text.Check("f", s, required, 10)
		if err != nil && !errors.Is(err, store.ErrInvalid) {
			t.Fatalf("%q: an error that is not ErrInvalid: %v", s, err)
		}
	})
}
