package claudecli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseEnvFile(t *testing.T) {
	got, err := ParseEnvFile(strings.NewReader("# comment\n\nANTHROPIC_BASE_URL=http://127.0.0.1:9\nexport TOKEN='a b'\nQUOTED=\"x=y\"\n EMPTY=\n"))
	require.NoError(t, err)
	require.Equal(t, []string{"ANTHROPIC_BASE_URL=http://127.0.0.1:9", "TOKEN=a b", "QUOTED=x=y", "EMPTY="}, got)
	for _, bad := range []string{"NOEQUALS", "1ABC=x", "A B=x", "=x"} {
		_, err := ParseEnvFile(strings.NewReader(bad))
		require.Error(t, err, bad)
	}
}

// FuzzParseEnvFile: no input panics, and every pair has a valid key.
func FuzzParseEnvFile(f *testing.F) {
	f.Add("A=1\n# c\nexport B='2'\n")
	f.Add("=\n\"\n")
	f.Fuzz(func(t *testing.T, in string) {
		pairs, err := ParseEnvFile(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, p := range pairs {
			k, _, ok := strings.Cut(p, "=")
			if !ok || !validEnvKey(k) {
				t.Fatalf("%q gave %q", in, p)
			}
		}
	})
}
