package wire

import (
	"encoding/json"
	"slices"
	"strconv"
)

// Int is an integer field of a request body, kept as it was sent: the
// server then refuses a value that is not an integer (2 and 2.0 are; "2",
// 2.5 and true are not) with the field's name and its own error code,
// which decoding into an int cannot do. A client makes one with IntOf. A
// nil *Int is a field that was absent or null.
type Int struct{ raw json.RawMessage }

// IntOf returns n as a request body's integer field.
func IntOf(n int) *Int { return &Int{raw: strconv.AppendInt(nil, int64(n), 10)} }

// MarshalJSON writes the integer as it was made or sent.
func (i Int) MarshalJSON() ([]byte, error) {
	if len(i.raw) == 0 {
		return []byte("null"), nil
	}
	return i.raw, nil
}

// UnmarshalJSON keeps the value as sent, whatever it is, for the server
// to check (Raw).
func (i *Int) UnmarshalJSON(data []byte) error {
	i.raw = slices.Clone(data)
	return nil
}

// Raw returns the value as it was sent; nil when i is nil (the field was
// absent or null).
func (i *Int) Raw() json.RawMessage {
	if i == nil {
		return nil
	}
	return i.raw
}
