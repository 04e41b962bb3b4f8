package httpapi

import (
	"encoding"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/agorahq/agora/internal/httpjson"
)

// document is an OpenAPI 3.1 document, as much of it as Agora uses.
type document struct {
	OpenAPI    string                              `json:"openapi"`
	Info       docInfo                             `json:"info"`
	Tags       []docTag                            `json:"tags"`
	Paths      map[string]map[string]*docOperation `json:"paths"`
	Components docComponents                       `json:"components"`
}

type docInfo struct {
	Title       string `json:"title"`
	Version     string `json:"version"`
	Description string `json:"description"`
}

type docTag struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

type docComponents struct {
	Schemas         map[string]*schema        `json:"schemas"`
	SecuritySchemes map[string]securityScheme `json:"securitySchemes"`
}

type securityScheme struct {
	Type        string `json:"type"`
	Scheme      string `json:"scheme"`
	Description string `json:"description"`
}

type docOperation struct {
	OperationID string                  `json:"operationId"`
	Summary     string                  `json:"summary"`
	Description string                  `json:"description,omitempty"`
	Tags        []string                `json:"tags"`
	Parameters  []docParameter          `json:"parameters,omitempty"`
	RequestBody *docRequestBody         `json:"requestBody,omitempty"`
	Responses   map[string]*docResponse `json:"responses"`
	// Security is the keys the operation accepts: nil inherits none, an
	// empty requirement ({}) in the list makes the key optional.
	Security []map[string][]string `json:"security,omitempty"`
	// Scope is the key scope the operation needs (an extension).
	Scope string `json:"x-agora-scope,omitempty"`
}

type docParameter struct {
	Name     string  `json:"name"`
	In       string  `json:"in"`
	Required bool    `json:"required"`
	Schema   *schema `json:"schema"`
}

type docRequestBody struct {
	Required bool                `json:"required"`
	Content  map[string]docMedia `json:"content"`
}

type docResponse struct {
	Description string              `json:"description"`
	Content     map[string]docMedia `json:"content,omitempty"`
}

type docMedia struct {
	Schema *schema `json:"schema"`
}

// schema is a JSON Schema (2020-12, the dialect of OpenAPI 3.1). Type is a
// string or, for a nullable value, a list with "null".
type schema struct {
	Ref                  string             `json:"$ref,omitempty"`
	Type                 any                `json:"type,omitempty"`
	Format               string             `json:"format,omitempty"`
	Description          string             `json:"description,omitempty"`
	Properties           map[string]*schema `json:"properties,omitempty"`
	Required             []string           `json:"required,omitempty"`
	Items                *schema            `json:"items,omitempty"`
	AdditionalProperties *schema            `json:"additionalProperties,omitempty"`
	AnyOf                []*schema          `json:"anyOf,omitempty"`
	Minimum              *int               `json:"minimum,omitempty"`
}

// errorSchema is the component every error answer refers to.
const errorSchema = "Error"

// bearerScheme names the API key security scheme.
const bearerScheme = "apiKey"

// buildDocument builds the document of ops.
func buildDocument(ops []operation) document {
	g := &schemas{defs: map[string]*schema{}, names: map[reflect.Type]string{}, taken: map[string]bool{}}
	// Request bodies have schemas of their own: a handler reads a field
	// left out as its zero value and says itself what it misses (400), so
	// a property of a request is required only where its struct tag
	// openapi:"required" says so.
	in := &schemas{defs: g.defs, names: map[reflect.Type]string{}, taken: g.taken, input: true}
	doc := document{
		OpenAPI: "3.1.0",
		Info: docInfo{Title: "Agora", Version: "1",
			Description: "Every route of Agora's handlers: the AOP slots API with Prism pipelines under /api/v1, the Trolley Arena, " +
				"the discussion and squad chat, the agent chat, and the health route. Every error answers " +
				"{\"error\":{\"code\",\"message\"},\"detail\"}. The /api/v1 routes need a Bearer API key (with the scope an " +
				"operation names in x-agora-scope); the arena and discussion routes need one only when the host requires keys."},
		Tags: []docTag{
			{tagAOP, "Claims, comments, role slots, API keys and device login (AOP)"},
			{tagPrism, "Prism pipelines: stage slots, flags, consensus, protocols"},
			{tagArena, "Trolley Arena games"},
			{tagDiscussion, "Discussion prompts and squad chat"},
			{tagChat, "Agent chat conversations"},
			{tagHealth, "Whether the server's store answers"},
		},
		Paths: map[string]map[string]*docOperation{},
		Components: docComponents{
			Schemas: g.defs,
			SecuritySchemes: map[string]securityScheme{bearerScheme: {Type: "http", Scheme: "bearer",
				Description: "An Agora API key, created with POST /api/v1/keys or a device login"}},
		},
	}
	g.defs[errorSchema] = g.of(reflect.TypeFor[httpjson.Body]())
	for _, op := range ops {
		d := &docOperation{OperationID: operationID(op), Summary: op.summary, Tags: []string{op.tag}, Responses: map[string]*docResponse{}}
		for _, name := range pathParams(op.path) {
			d.Parameters = append(d.Parameters, docParameter{Name: name, In: "path", Required: true, Schema: &schema{Type: "string"}})
		}
		for _, param := range strings.Fields(op.query) {
			name, typ, ok := strings.Cut(param, ":")
			if !ok {
				typ = "string"
			}
			d.Parameters = append(d.Parameters, docParameter{Name: name, In: "query", Schema: &schema{Type: typ}})
		}
		switch op.auth {
		case keyRequired:
			d.Security = []map[string][]string{{bearerScheme: {}}}
			d.Description = "Needs a Bearer API key" + scopeNote(op)
		case keyIfRequired:
			d.Security = []map[string][]string{{}, {bearerScheme: {}}}
			d.Description = "Open, unless the host requires keys (httpapi.WithKeys): then a Bearer API key" + scopeNote(op)
		case chatAuth:
			d.Description = "Authenticated by the host's agent chat scheme, if it has one (httpapi.WithChatAuth)."
		}
		d.Scope = string(op.scope)
		if op.body != nil {
			d.RequestBody = &docRequestBody{Required: !op.optionalBody, Content: map[string]docMedia{"application/json": {in.of(reflect.TypeOf(op.body))}}}
		}
		d.Responses[strconv.Itoa(op.status)] = g.response(op.status, op.resp, op.media)
		for status, body := range op.other {
			d.Responses[strconv.Itoa(status)] = g.response(status, body, "")
		}
		d.Responses["default"] = &docResponse{Description: "An error",
			Content: map[string]docMedia{"application/json": {&schema{Ref: "#/components/schemas/" + errorSchema}}}}
		if doc.Paths[op.path] == nil {
			doc.Paths[op.path] = map[string]*docOperation{}
		}
		doc.Paths[op.path][strings.ToLower(op.method)] = d
	}
	return doc
}

func scopeNote(op operation) string {
	if op.scope == "" {
		return " (any scope)."
	}
	return " with scope " + string(op.scope) + "."
}

// nonWord is what an operation ID leaves out of a path.
var nonWord = regexp.MustCompile(`[^A-Za-z0-9]+`)

// operationID is the method and the path's words: "post_api_v1_claims".
func operationID(op operation) string {
	return strings.ToLower(op.method) + "_" + strings.Trim(nonWord.ReplaceAllString(op.path, "_"), "_")
}

// response is the answer of status with the body of body's type, or of
// media when it is not JSON.
func (g *schemas) response(status int, body any, media string) *docResponse {
	r := &docResponse{Description: http.StatusText(status)}
	switch {
	case media != "":
		r.Content = map[string]docMedia{media: {&schema{Type: "string"}}}
	case body != nil:
		r.Content = map[string]docMedia{"application/json": {g.of(reflect.TypeOf(body))}}
	}
	return r
}

// schemas derives JSON schemas from Go types as encoding/json writes them;
// a named struct type becomes a component.
type schemas struct {
	defs  map[string]*schema
	names map[reflect.Type]string
	taken map[string]bool
	input bool // of request bodies: required by tag only, components named …Input
}

// forms is a type that decodes from several JSON forms (wire.NewSource: a
// string or an object); its schema is any of theirs.
type forms interface{ OpenAPIForms() []any }

var (
	formsType     = reflect.TypeFor[forms]()
	timeType      = reflect.TypeFor[time.Time]()
	durationType  = reflect.TypeFor[time.Duration]()
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// of returns the schema of values of t.
func (g *schemas) of(t reflect.Type) *schema {
	switch {
	case t.Implements(formsType):
		var out schema
		for _, f := range reflect.Zero(t).Interface().(forms).OpenAPIForms() {
			out.AnyOf = append(out.AnyOf, g.of(reflect.TypeOf(f)))
		}
		return &out
	case t == timeType:
		return &schema{Type: "string", Format: "date-time"}
	case t == durationType:
		return &schema{Type: "integer", Description: "nanoseconds"}
	case t.Kind() != reflect.Pointer && (t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler)):
		return &schema{} // its own encoding: any JSON value
	case t.Kind() != reflect.Pointer && (t.Implements(textMarshaler) || reflect.PointerTo(t).Implements(textMarshaler)):
		return &schema{Type: "string"}
	}
	switch t.Kind() {
	case reflect.Bool:
		return &schema{Type: "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return &schema{Type: "integer"}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		zero := 0
		return &schema{Type: "integer", Minimum: &zero}
	case reflect.Float32, reflect.Float64:
		return &schema{Type: "number"}
	case reflect.String:
		return &schema{Type: "string"}
	case reflect.Pointer:
		return nullable(g.of(t.Elem()))
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return nullable(&schema{Type: "string", Format: "byte"})
		}
		return nullable(&schema{Type: "array", Items: g.of(t.Elem())})
	case reflect.Array:
		return &schema{Type: "array", Items: g.of(t.Elem())}
	case reflect.Map:
		return nullable(&schema{Type: "object", AdditionalProperties: g.of(t.Elem())})
	case reflect.Struct:
		if t.Name() == "" {
			return g.object(t)
		}
		name, ok := g.names[t]
		if !ok {
			name = g.name(t)
			g.names[t] = name
			g.defs[name] = g.object(t)
		}
		return &schema{Ref: "#/components/schemas/" + name}
	}
	return &schema{} // interfaces: any JSON value
}

// pkgPath is the package path inside a generic type's name.
var pkgPath = regexp.MustCompile(`[\w.-]*/`)

// name is t's component name: its package and name ("wire.Claim",
// "httpapi.items_wire.Comment"), unique.
func (g *schemas) name(t reflect.Type) string {
	pkg := t.PkgPath()
	pkg = pkg[strings.LastIndexByte(pkg, '/')+1:]
	n := pkgPath.ReplaceAllString(t.Name(), "")
	n = strings.NewReplacer("[", "_", "]", "", ",", "_", " ", "").Replace(n)
	if g.input {
		n += "Input"
	}
	name := pkg + "." + n
	for i := 2; g.taken[name]; i++ {
		name = fmt.Sprintf("%s.%s%d", pkg, n, i)
	}
	g.taken[name] = true
	return name
}

// object is the schema of struct type t: its fields as encoding/json names
// them, those without omitempty or omitzero required, embedded structs'
// fields inlined.
func (g *schemas) object(t reflect.Type) *schema {
	s := &schema{Type: "object", Properties: map[string]*schema{}}
	g.fields(t, s)
	return s
}

func (g *schemas) fields(t reflect.Type, s *schema) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				g.fields(ft, s)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fs := g.of(ft)
		if hasOpt(opts, "string") {
			fs = &schema{Type: "string"}
		}
		s.Properties[name] = fs
		required := !hasOpt(opts, "omitempty") && !hasOpt(opts, "omitzero")
		if g.input {
			// A request's field is required only where the table says so.
			required = f.Tag.Get("openapi") == "required"
		}
		if required {
			s.Required = append(s.Required, name)
		}
	}
}

func hasOpt(opts, opt string) bool {
	for o := range strings.SplitSeq(opts, ",") {
		if o == opt {
			return true
		}
	}
	return false
}

// nullable lets s be null too.
func nullable(s *schema) *schema {
	if typ, ok := s.Type.(string); ok && s.Ref == "" {
		s.Type = []string{typ, "null"}
		return s
	}
	if s.Ref == "" && s.Type == nil && s.AnyOf == nil {
		return s // any value already
	}
	return &schema{AnyOf: []*schema{s, {Type: "null"}}}
}
