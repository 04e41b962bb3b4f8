package httpjson

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzCheckJSONText: a JSON document passes the text rule exactly when it is
// UTF-8 and nothing in it decodes to a NUL character.
func FuzzCheckJSONText(f *testing.F) {
	for _, s := range []string{`{"a":"b"}`, `{"a":"\u0000"}`, `{"a":"\\u0000"}`, `{"\u0000":1}`, `["x\\\u0000"]`, "\"\xff\"", `"\\\\u0000"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		err := CheckJSONText([]byte(doc))
		var v any
		if json.Unmarshal([]byte(doc), &v) != nil {
			return // not JSON: decode refuses it anyway
		}
		bad := !utf8.ValidString(doc) || hasNUL(v)
		if bad != (err != nil) {
			t.Fatalf("%q: decodes with a NUL or bad UTF-8: %v, refused: %v", doc, bad, err)
		}
	})
}

func hasNUL(v any) bool {
	switch v := v.(type) {
	case string:
		return strings.ContainsRune(v, 0)
	case []any:
		for _, e := range v {
			if hasNUL(e) {
				return true
			}
		}
	case map[string]any:
		for k, e := range v {
			if strings.ContainsRune(k, 0) || hasNUL(e) {
				return true
			}
		}
	}
	return false
}
