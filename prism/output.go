package prism

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/agorahq/agora/store"
)

// FieldType is the JSON type of one field of a structured output.
type FieldType string

// The field types a Shape can ask for.
const (
	TypeString     FieldType = "string"   // a non-empty string
	TypeStringList FieldType = "string[]" // an array of strings (may be empty)
	TypeEnum       FieldType = "enum"     // one of Values
)

// Field is one required field of a structured output.
type Field struct {
	Type   FieldType `json:"type"`             // the JSON type the field must have
	Values []string  `json:"values,omitempty"` // for TypeEnum
}

// Shape is the JSON object a layer's structured output must be: exactly
// these fields, each of its type. A nil Shape means prose only.
type Shape map[string]Field

// Limits on structured output.
const (
	MaxOutputBytes  = 64 << 10
	MaxOutputString = 10_000
	MaxOutputList   = 100
)

func (s Shape) check() error {
	if len(s) == 0 {
		return fmt.Errorf("an output shape needs at least one field")
	}
	for name, f := range s {
		if strings.TrimSpace(name) == "" {
			return fmt.Errorf("an output field has no name")
		}
		if !storableText(name) || slices.ContainsFunc(f.Values, func(v string) bool { return !storableText(v) }) {
			return fmt.Errorf("field %q: names and values must be UTF-8 text without NUL", name)
		}
		switch f.Type {
		case TypeString, TypeStringList:
			if len(f.Values) != 0 {
				return fmt.Errorf("field %q: only an enum has values", name)
			}
		case TypeEnum:
			if len(f.Values) == 0 {
				return fmt.Errorf("enum field %q has no values", name)
			}
		default:
			return fmt.Errorf("field %q: type must be string, string[] or enum", name)
		}
	}
	return nil
}

func badOutput(format string, args ...any) error {
	return store.Errorf(store.ErrInvalid, "invalid_output", format, args...)
}

// Validate checks that raw is a JSON object of exactly the shape's fields
// and returns it decoded. Errors are store.ErrInvalid with a message naming
// the field.
func (s Shape) Validate(raw json.RawMessage) (map[string]any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, badOutput("output is required: %s", s.describe())
	}
	if len(raw) > MaxOutputBytes {
		return nil, badOutput("output is larger than %d bytes", MaxOutputBytes)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, badOutput("output must be a JSON object: %s", s.describe())
	}
	out := make(map[string]any, len(obj))
	for name := range obj {
		if _, ok := s[name]; !ok {
			return nil, badOutput("output has an unknown field %q: %s", name, s.describe())
		}
	}
	for name, f := range s {
		v, ok := obj[name]
		if !ok {
			return nil, badOutput("output is missing %q: %s", name, s.describe())
		}
		switch f.Type {
		case TypeString, TypeEnum:
			var str string
			if err := json.Unmarshal(v, &str); err != nil {
				return nil, badOutput("output field %q must be a string", name)
			}
			if f.Type == TypeEnum && !slices.Contains(f.Values, str) {
				return nil, badOutput("output field %q must be one of %s", name, strings.Join(f.Values, ", "))
			}
			if f.Type == TypeString && (strings.TrimSpace(str) == "" || len([]rune(str)) > MaxOutputString) {
				return nil, badOutput("output field %q must be a string of 1 to %d characters", name, MaxOutputString)
			}
			out[name] = str
		case TypeStringList:
			var list []string
			if err := json.Unmarshal(v, &list); err != nil || list == nil {
				return nil, badOutput("output field %q must be an array of strings", name)
			}
			if len(list) > MaxOutputList {
				return nil, badOutput("output field %q has more than %d items", name, MaxOutputList)
			}
			out[name] = list
		}
	}
	return out, nil
}

// describe renders the shape for error messages, fields in name order.
func (s Shape) describe() string {
	names := make([]string, 0, len(s))
	for n := range s {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		f := s[n]
		switch f.Type {
		case TypeEnum:
			parts[i] = n + ": " + strings.Join(f.Values, "|")
		default:
			parts[i] = n + ": " + string(f.Type)
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
