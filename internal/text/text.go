// Package text holds the one rule by which every domain checks the text
// its callers give it, so a name, a title or a message is refused alike
// whichever service takes it and whichever backend would store it.
package text

import (
	"strings"
	"unicode/utf8"

	"github.com/agorahq/agora/store"
)

// Check validates the text of field: not blank when required, valid
// UTF-8 without NUL (PostgreSQL cannot store one, so no backend may), and
// at most max characters. Its error is a store.ErrInvalid coded
// "invalid_<field>" whose message says which of these s broke.
func Check(field, s string, required bool, max int) error {
	switch {
	case required && strings.TrimSpace(s) == "":
		return store.Errorf(store.ErrInvalid, "invalid_"+field, "%s is required", field)
	case !utf8.ValidString(s):
		return store.Errorf(store.ErrInvalid, "invalid_"+field, "%s is not valid UTF-8", field)
	case strings.ContainsRune(s, 0):
		return store.Errorf(store.ErrInvalid, "invalid_"+field, "%s contains a NUL character", field)
	}
	if n := utf8.RuneCountInString(s); n > max {
		return store.Errorf(store.ErrInvalid, "invalid_"+field, "%s is %d characters long; the limit is %d", field, n, max)
	}
	return nil
}

// Trimmed is Check of s without its surrounding white space, which it
// returns: what a domain that stores names and messages trimmed keeps.
func Trimmed(field, s string, required bool, max int) (string, error) {
	s = strings.TrimSpace(s)
	return s, Check(field, s, required, max)
}
