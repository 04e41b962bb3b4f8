package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/agorahq/agora/store"
)

// MaxBodyBytes is the largest request body any route accepts.
const MaxBodyBytes = 1 << 20

func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		http.Error(w, `{"error":{"code":"internal","message":"internal server error"}}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

func invalid(code, format string, args ...any) error {
	return store.Errorf(store.ErrInvalid, code, format, args...)
}

// decodeBody reads exactly one JSON object into v, refusing unknown fields,
// trailing data, an empty body and bodies over MaxBodyBytes.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) error {
	return decode(w, r, v, true)
}

// decodeOptionalBody is decodeBody for routes whose body may be empty.
func decodeOptionalBody(w http.ResponseWriter, r *http.Request, v any) error {
	return decode(w, r, v, false)
}

func decode(w http.ResponseWriter, r *http.Request, v any, required bool) error {
	body := http.MaxBytesReader(w, r.Body, MaxBodyBytes)
	data, err := io.ReadAll(body)
	if err != nil {
		return err // *http.MaxBytesError or a read failure
	}
	if len(bytes.TrimSpace(data)) == 0 {
		if !required {
			return nil
		}
		return invalid("invalid_json", "request body is empty; a JSON object is required")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return invalid("invalid_json", "request body is not valid: %s", describeJSONError(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return invalid("invalid_json", "request body has data after the JSON object")
	}
	return nil
}

func describeJSONError(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("malformed JSON at byte %d", syn.Offset)
	case errors.As(err, &typ):
		if typ.Field != "" {
			return fmt.Sprintf("field %q must be %s, not %s", typ.Field, jsonKind(typ.Type.Kind().String()), typ.Value)
		}
		return fmt.Sprintf("expected %s, not %s", jsonKind(typ.Type.Kind().String()), typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "malformed JSON: unexpected end"
	}
	return err.Error() // e.g. `json: unknown field "x"`
}

func jsonKind(goKind string) string {
	switch goKind {
	case "struct", "map":
		return "an object"
	case "slice", "array":
		return "an array"
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	}
	return "a number"
}

// queryInt parses an optional integer query parameter.
func queryInt(r *http.Request, name string) (int, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, invalid("invalid_"+name, "%s must be an integer", name)
	}
	return n, nil
}

// intField parses a JSON value that must be an integer (2 or 2.0, never "2"
// or 2.5).
func intField(name string, raw json.RawMessage) (int, error) {
	raw = bytes.TrimSpace(raw)
	f, err := strconv.ParseFloat(string(raw), 64)
	if len(raw) == 0 || raw[0] == '"' || err != nil || f != float64(int64(f)) || f > 1e9 || f < -1e9 {
		return 0, invalid("invalid_count", "%s must be an integer", name)
	}
	return int(f), nil
}
