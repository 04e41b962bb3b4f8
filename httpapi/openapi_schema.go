package httpapi

import (
	"encoding"
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/agorahq/agora/httpapi/wire"
	"github.com/agorahq/agora/internal/httpjson"
)

// document is an OpenAPI 3.1 document, as much of it as Agora uses.
type document struct {
	OpenAPI    string                              `json:"openapi"`
	Info       docInfo                             `json:"info"`
	Servers    []docServer                         `json:"servers"`
	Tags       []docTag                            `json:"tags"`
	Paths      map[string]map[string]*docOperation `json:"paths"`
	Components docComponents                       `json:"components"`
}

type docInfo struct {
	Title       string     `json:"title"`
	Version     string     `json:"version"`
	Description string     `json:"description"`
	License     docLicense `json:"license"`
}

type docLicense struct {
	Name       string `json:"name"`
	Identifier string `json:"identifier"`
}

type docServer struct {
	URL         string `json:"url"`
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
	// GoName is the field name a Go generator gives a property whose JSON
	// name it would spell badly ("_id": ID, not UnderscoreId).
	GoName string `json:"x-go-name,omitempty"`
}

// errorSchema is the component every error answer refers to.
const errorSchema = "Error"

// bearerScheme names the API key security scheme.
const bearerScheme = "apiKey"

// buildDocument builds the document of ops.
func buildDocument(ops []operation) document {
	g := &schemas{defs: map[string]*schema{}, names: map[reflect.Type]string{}, bases: map[string]componentName{}}
	// Request bodies have schemas of their own: a handler reads a field
	// left out as its zero value and says itself what it misses (400), so
	// a property of a request is required only where its struct tag
	// openapi:"required" says so.
	in := &schemas{defs: g.defs, names: map[reflect.Type]string{}, bases: g.bases, input: true}
	doc := document{
		OpenAPI: "3.1.0",
		Info: docInfo{Title: "Agora", Version: "1",
			Description: "Every route of Agora's handlers: the role-slot API with Prism pipelines under /api/v1, the Trolley Arena, " +
				"the discussion and squad chat, the agent chat, and the health route. Every error answers " +
				"{\"error\":{\"code\",\"message\"},\"detail\"}. The /api/v1 routes need a Bearer API key (with the scope an " +
				"operation names in x-agora-scope); the arena and discussion routes need one only when the host requires keys.",
			License: docLicense{Name: "MIT", Identifier: "MIT"}},
		Servers: []docServer{{URL: "/", Description: "The server that serves this document"}},
		Tags: []docTag{
			{tagAOP, "Claims, comments, role slots, API keys and device login"},
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
	errorBody := reflect.TypeFor[httpjson.Body]()
	g.names[errorBody] = errorSchema
	g.defs[errorSchema] = g.object(errorBody)
	for _, op := range ops {
		d := &docOperation{OperationID: op.id, Summary: op.summary, Tags: []string{op.tag}, Responses: map[string]*docResponse{}}
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
		case public:
			d.Security = []map[string][]string{{}}
		case keyRequired:
			d.Security = []map[string][]string{{bearerScheme: {}}}
			d.Description = "Needs a Bearer API key" + scopeNote(op)
		case keyIfRequired:
			d.Security = []map[string][]string{{}, {bearerScheme: {}}}
			d.Description = "Open, unless the host requires keys (httpapi.WithKeys): then a Bearer API key" + scopeNote(op)
		case chatAuth:
			// The host's scheme (a shared secret, a signed header, its own
			// session) is not an Agora API key; the document names none.
			d.Security = []map[string][]string{{}}
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
		for _, status := range errorStatuses(op) {
			if d.Responses[strconv.Itoa(status)] == nil {
				d.Responses[strconv.Itoa(status)] = errorResponse(errorWhy[status])
			}
		}
		d.Responses["default"] = errorResponse("Any other error")
		if doc.Paths[op.path] == nil {
			doc.Paths[op.path] = map[string]*docOperation{}
		}
		doc.Paths[op.path][strings.ToLower(op.method)] = d
	}
	g.rename(&doc)
	return doc
}

// errorWhy says when an operation answers each error status.
var errorWhy = map[int]string{
	http.StatusBadRequest:         "The request is not valid: a malformed or unknown body field, text that is not UTF-8 or holds a NUL, a number out of range",
	http.StatusUnauthorized:       "No API key, or one that is not known or revoked",
	http.StatusForbidden:          "The key lacks the scope or is not the one allowed to act, or a browser's write came from another site",
	http.StatusNotFound:           "What the path names does not exist, or nothing is there to take",
	http.StatusConflict:           "The state does not allow it: someone was first, or it is already done",
	http.StatusTooManyRequests:    "The key's rate limit is spent; Retry-After says when to try again",
	http.StatusServiceUnavailable: "The store does not answer; Retry-After says when to try again",
}

// errorStatuses lists the error statuses op can answer with, from who may
// call it and what it does: every route refuses bad input (400) and answers
// 503 while its store does not; a keyed route answers 401 and 403, and
// with a write 429; a path that names something answers 404 when it does
// not exist; a write can lose a race or find the state moved on (409).
func errorStatuses(op operation) []int {
	write := op.method != http.MethodGet && op.method != http.MethodHead
	out := []int{http.StatusBadRequest}
	if op.auth != public {
		out = append(out, http.StatusUnauthorized)
	}
	if op.auth != public || write {
		out = append(out, http.StatusForbidden)
	}
	if len(pathParams(op.path)) > 0 || strings.Contains(op.path, "/jobs/") {
		out = append(out, http.StatusNotFound)
	}
	if write && op.auth != public {
		out = append(out, http.StatusConflict)
	}
	if write && (op.auth == keyRequired || op.auth == keyIfRequired) {
		out = append(out, http.StatusTooManyRequests)
	}
	return append(out, http.StatusServiceUnavailable)
}

// errorResponse is an answer with the error body.
func errorResponse(description string) *docResponse {
	return &docResponse{Description: description,
		Content: map[string]docMedia{"application/json": {&schema{Ref: "#/components/schemas/" + errorSchema}}}}
}

func scopeNote(op operation) string {
	if op.scope == "" {
		return " (any scope)."
	}
	return " with scope " + string(op.scope) + "."
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
	// bases holds, by a component's provisional key, the name it gets in
	// the document unless another type's name is the same (rename).
	bases map[string]componentName
	input bool // of request bodies: required by tag only, components named …Input
}

// componentName is a component's name in the document and the package of
// its Go type, which qualifies the name when two types share it.
type componentName struct {
	name, pkg string
}

// forms is a type that decodes from several JSON forms (wire.NewSource: a
// string or an object); its schema is any of theirs.
type forms interface{ OpenAPIForms() []any }

var (
	formsType     = reflect.TypeFor[forms]()
	intType       = reflect.TypeFor[wire.Int]()
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
	case t == intType:
		return &schema{Type: "integer"}
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

// name is t's provisional component key, unique ("wire.Claim",
// "httpapi.items[wire.Comment]Input"), and records the name it is given in
// the document: the Go type's name, exported ("takeResponse":
// TakeResponse), a generic list named after its element ("items[Comment]":
// CommentList), with Input after a request body's.
func (g *schemas) name(t reflect.Type) string {
	pkg := t.PkgPath()
	pkg = pkg[strings.LastIndexByte(pkg, '/')+1:]
	base := t.Name()
	if i := strings.IndexByte(base, '['); i >= 0 {
		arg := strings.TrimSuffix(base[i+1:], "]")
		base = arg[strings.LastIndexByte(arg, '.')+1:] + "List"
	}
	base = exported(base)
	if name, ok := componentNames[t]; ok {
		base = name
	}
	if g.input {
		base += "Input"
	}
	key := pkg + "." + t.String()
	if g.input {
		key += "Input"
	}
	g.bases[key] = componentName{name: base, pkg: pkg}
	return key
}

// componentNames names the components whose Go type's name the document
// has always given another name: the claims' page, the role slots' list
// and an agent chat message.
var componentNames = map[reflect.Type]string{
	reflect.TypeFor[wire.Items[wire.Claim]]():   "ClaimPage",
	reflect.TypeFor[wire.ConversationMessage](): "AgentchatMessage",
}

// exported is name with its first letter upper case.
func exported(name string) string {
	return strings.ToUpper(name[:1]) + name[1:]
}

// rename gives every component of doc its name: its type's (bases), or,
// where two types' names are the same, the wire package's type keeps it
// and the others' are qualified by their package ("SlotsClaim"), so a
// name does not depend on the order the types were met in.
func (g *schemas) rename(doc *document) {
	count := map[string]int{}
	wire := map[string]int{}
	for _, b := range g.bases {
		count[b.name]++
		if b.pkg == "wire" {
			wire[b.name]++
		}
	}
	final := map[string]string{}
	for key, b := range g.bases {
		name := b.name
		if count[name] > 1 && (b.pkg != "wire" || wire[name] > 1) {
			name = exported(b.pkg) + name
		}
		final[key] = name
	}
	defs := map[string]*schema{}
	for key, s := range g.defs {
		if name, ok := final[key]; ok {
			key = name
		}
		defs[key] = s
	}
	const prefix = "#/components/schemas/"
	var walk func(s *schema)
	walk = func(s *schema) {
		if s == nil {
			return
		}
		if name, ok := final[strings.TrimPrefix(s.Ref, prefix)]; ok && strings.HasPrefix(s.Ref, prefix) {
			s.Ref = prefix + name
		}
		for _, p := range s.Properties {
			walk(p)
		}
		walk(s.Items)
		walk(s.AdditionalProperties)
		for _, a := range s.AnyOf {
			walk(a)
		}
	}
	for _, s := range defs {
		walk(s)
	}
	for _, item := range doc.Paths {
		for _, op := range item {
			for _, p := range op.Parameters {
				walk(p.Schema)
			}
			if op.RequestBody != nil {
				for _, m := range op.RequestBody.Content {
					walk(m.Schema)
				}
			}
			for _, r := range op.Responses {
				for _, m := range r.Content {
					walk(m.Schema)
				}
			}
		}
	}
	g.defs = defs
	doc.Components.Schemas = defs
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
		if strings.HasPrefix(name, "_") {
			fs.GoName = goName(name)
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

// goName is the Go field name of a JSON name that starts with an
// underscore: "_id" is ID.
func goName(json string) string {
	name := exported(strings.TrimLeft(json, "_"))
	if name == "Id" {
		return "ID"
	}
	return name
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
