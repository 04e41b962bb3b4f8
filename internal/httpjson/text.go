package httpjson

import (
	"net/http"
	"unicode/utf8"
)

// The rule for text, checked before any handler or store sees a request: no
// NUL character and nothing that is not UTF-8, in the path, the query or a
// JSON body. PostgreSQL refuses both in text columns while memory and Redis
// would store them, so without one rule the same request would be a 500 on
// one backend and a 201 on another; no Agora field has a use for either.

// checkURL applies the text rule to the request's path and query.
func checkURL(r *http.Request) error {
	if !cleanText(r.URL.Path) {
		return Invalid("invalid_path", "the path must be UTF-8 text without NUL characters")
	}
	for k, vs := range r.URL.Query() {
		if !cleanText(k) {
			return Invalid("invalid_query", "query parameter names must be UTF-8 text without NUL characters")
		}
		for _, v := range vs {
			if !cleanText(v) {
				return Invalid("invalid_"+k, "%s must be UTF-8 text without NUL characters", k)
			}
		}
	}
	return nil
}

func cleanText(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return false
		}
	}
	return utf8.ValidString(s)
}

// CheckJSONText applies the text rule to a JSON document: raw bytes that
// are not UTF-8 (which encoding/json would quietly turn into U+FFFD) and
// the escape \u0000 anywhere in it, a field name or a value of any depth.
// Its refusal is invalid_text.
func CheckJSONText(data []byte) error {
	if !utf8.Valid(data) {
		return Invalid("invalid_text", "request body is not UTF-8")
	}
	for i := 0; i < len(data); i++ {
		if data[i] != '\\' || i+1 >= len(data) {
			continue
		}
		i++ // the escaped character: "\\" must not start another escape
		if data[i] == 'u' && i+4 < len(data) && string(data[i+1:i+5]) == "0000" {
			return Invalid("invalid_text", "request body contains a NUL character (\\u0000), which no field accepts")
		}
	}
	return nil
}
