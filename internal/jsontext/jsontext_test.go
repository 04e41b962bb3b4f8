package jsontext_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/internal/jsontext"
)

func TestString(t *testing.T) {
	for in, want := range map[string]string{
		`"plain",`:                        "plain",
		`""`:                              "",
		`"ünï ✓"]`:                        "ünï ✓",
		`"a\"b\\c\/d\b\f\n\r\t" tail`:     "a\"b\\c/d\b\f\n\r\t",
		`"<tag> & more"`:                  "<tag> & more",
		`"line one\nline two\n\nthe end"`: "line one\nline two\n\nthe end",
	} {
		text, n, ok := jsontext.String(in)
		require.True(t, ok, in)
		require.Equal(t, want, text, in)
		var viaJSON string
		require.NoError(t, json.Unmarshal([]byte(in[:n]), &viaJSON), in)
		require.Equal(t, viaJSON, text, in)
	}
	for _, in := range []string{``, `x`, `"open`, `"esc\`, `"\u00e9"`, `"a\qb"`, "\"tab\there\"", "\"\xff\"", "\"\\n\xfe\""} {
		_, _, ok := jsontext.String(in)
		require.False(t, ok, in)
	}
}

func TestInt(t *testing.T) {
	for in, want := range map[string]int64{`0`: 0, `-0`: 0, `1700000000123}`: 1700000000123, `-42,`: -42, `9223372036854775807`: 1<<63 - 1} {
		v, n, ok := jsontext.Int(in)
		require.True(t, ok, in)
		require.Equal(t, want, v, in)
		var viaJSON int64
		require.NoError(t, json.Unmarshal([]byte(in[:n]), &viaJSON), in)
	}
	for _, in := range []string{``, `-`, `+1`, `01`, `-01`, `1.5`, `1e3`, `1E3`, `9223372036854775808`, `x`, `"1"`} {
		_, _, ok := jsontext.Int(in)
		require.False(t, ok, in)
	}
}

// FuzzString: where String reads a string, encoding/json reads the same
// bytes as the same text.
func FuzzString(f *testing.F) {
	for _, s := range []string{`"plain"`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u00e9"`, "\"\xff\"", `"é"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		text, n, ok := jsontext.String(s)
		if !ok {
			return
		}
		var viaJSON string
		if err := json.Unmarshal([]byte(s[:n]), &viaJSON); err != nil {
			t.Fatalf("read %q, refused by encoding/json: %v", s[:n], err)
		}
		require.Equal(t, viaJSON, text)
	})
}

// FuzzInt: where Int reads a number, encoding/json reads the same bytes as
// the same int64, and no digit, fraction or exponent follows them.
func FuzzInt(f *testing.F) {
	for _, s := range []string{`0`, `-12`, `1700000000123}`, `1.5`, `01`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, n, ok := jsontext.Int(s)
		if !ok {
			return
		}
		var viaJSON int64
		if err := json.Unmarshal([]byte(s[:n]), &viaJSON); err != nil {
			t.Fatalf("read %q, refused by encoding/json: %v", s[:n], err)
		}
		require.Equal(t, viaJSON, v)
		if n < len(s) {
			require.NotContains(t, "0123456789.eE", string(s[n]), "the number goes on in %q", s)
		}
	})
}
