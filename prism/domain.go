package prism

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// NormalizeDomain turns a proposed domain into a slug as docs/prism.md
// says: lower-cased, accents stripped, spaces and underscores turned into
// dashes, every other character that is not a-z, 0-9 or a dash dropped,
// runs of dashes collapsed and dashes trimmed from both ends. The result
// may be empty; callers refuse an empty slug.
func NormalizeDomain(s string) string {
	var b strings.Builder
	dash := false // the last character written was a dash
	for _, r := range norm.NFD.String(s) {
		if unicode.Is(unicode.Mn, r) {
			continue // a combining accent, split off its letter by NFD
		}
		r = unicode.ToLower(r)
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case r == '-' || r == ' ' || r == '_' || unicode.IsSpace(r):
			if !dash && b.Len() > 0 {
				b.WriteByte('-')
				dash = true
			}
		}
	}
	return strings.TrimRight(b.String(), "-")
}
