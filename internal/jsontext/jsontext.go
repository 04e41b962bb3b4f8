// Package jsontext reads, by hand, the compact JSON that Agora's stores
// write for a job's comments, where encoding/json's validation pass and
// reflection cost a hot path several times the reading. Each reader says
// when it does not read its input; its caller then decodes it with
// encoding/json, and where a reader reads, it answers what encoding/json
// would (FuzzString, FuzzInt).
package jsontext

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// String reads the JSON string that s starts with: its text, and the bytes
// of s it spans. ok is false where it does not read one: a \u escape (the
// others have one character each), a control character, text that is not
// valid UTF-8 (encoding/json would replace it), or no closing quote.
func String(s string) (text string, n int, ok bool) {
	if s == "" || s[0] != '"' {
		return "", 0, false
	}
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			text = s[1:i]
			return text, i + 1, utf8.ValidString(text)
		case c == '\\':
			return escaped(s)
		case c < 0x20:
			return "", 0, false
		}
	}
	return "", 0, false
}

// escaped is String for a string with escapes.
func escaped(s string) (text string, n int, ok bool) {
	var b strings.Builder
	b.Grow(len(s))
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			text = b.String()
			return text, i + 1, utf8.ValidString(text)
		case c < 0x20:
			return "", 0, false
		case c != '\\':
			b.WriteByte(c)
			continue
		}
		if i++; i == len(s) {
			return "", 0, false
		}
		switch c := s[i]; c {
		case '"', '\\', '/':
			b.WriteByte(c)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		default:
			return "", 0, false
		}
	}
	return "", 0, false
}

// Int reads the JSON integer that s starts with (an optional minus and
// digits, no leading zero, no fraction or exponent) as an int64, and the
// bytes of s it spans; ok is false for anything else, or one out of range.
func Int(s string) (v int64, n int, ok bool) {
	if n < len(s) && s[n] == '-' {
		n++
	}
	start := n
	for n < len(s) && '0' <= s[n] && s[n] <= '9' {
		n++
	}
	switch {
	case n == start,
		s[start] == '0' && n > start+1,
		n < len(s) && (s[n] == '.' || s[n] == 'e' || s[n] == 'E'):
		return 0, 0, false
	}
	v, err := strconv.ParseInt(s[:n], 10, 64)
	return v, n, err == nil
}
