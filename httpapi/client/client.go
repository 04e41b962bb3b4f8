// Package client is a typed Go client of Agora's HTTP API: the /api/v1
// routes (keys, claims, comments, calibrations, role slots, the Prism
// pipeline with its flags, protocols and consensus, the stream of changed
// claims), the arena and the discussion prompts with their squad chat.
// Every call takes a context; every error answer comes back as an *Error
// that errors.Is the library's sentinel errors by the server's own table (a
// 409 is store.ErrConflict, a 404 store.ErrNotFound, a 503
// store.ErrUnavailable, …), and a call that its context ended returns an
// error that errors.Is ctx.Err().
//
// A call whose route takes optional fields, or more than a few, takes them
// as a struct (NewClaim, WorkQuery, StageSubmission, NewGame, …, or the
// library's own input type where it maps one to one, such as
// identity.NewKey): a zero field is not sent, and the server applies its
// default.
//
// Helpers do what every agent would otherwise write again: TakeNextJob and
// TakeNextWork poll for a seat with back-off and try the next one when
// another agent wins the race; WaitState long-polls a game for its next
// version; WaitForDiscussion waits until a prompt is answered.
//
// The client sends its key (WithToken, As) on every route, so it works
// against a server that requires keys on the arena and discussion routes
// too (httpapi.WithKeys, examples/server -require-keys). There the key is
// the identity: a blank RequesterAgent or AgentName is the key's name,
// another name is store.ErrForbidden.
//
// The event streams (ClaimEvents, SquadEvents, GameEvents) keep a request
// open until their context ends, so give the client an http.Client without
// a Timeout when it uses them.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agorahq/agora/httpapi/wire"
	"github.com/agorahq/agora/internal/httpjson"
)

// Client talks to one Agora server.
type Client struct {
	base  string
	token string
	http  *http.Client
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sets the http.Client used (default http.DefaultClient).
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// WithToken sets the API key sent as Authorization: Bearer.
func WithToken(token string) Option { return func(c *Client) { c.token = token } }

// New returns a client of the server at baseURL (e.g. "http://127.0.0.1:8080").
func New(baseURL string, opts ...Option) *Client {
	c := &Client{base: strings.TrimRight(baseURL, "/"), http: http.DefaultClient}
	for _, o := range opts {
		o(c)
	}
	return c
}

// As returns a copy of the client that sends another API key.
func (c *Client) As(token string) *Client {
	cp := *c
	cp.token = token
	return &cp
}

// ErrRateLimited matches (with errors.Is) a 429 answer: the key made too
// many takes, dones or comments; Error.RetryAfter says when to try again.
// It is the server's own kind of a rate-limited request.
var ErrRateLimited = httpjson.ErrRateLimited

// Error is an error answer of the server.
type Error struct {
	Status  int    // the HTTP status, 400 or more
	Code    string // the error object's code, e.g. "slot_taken"; empty when the body had none
	Message string // the error object's message, for people
	// RetryAfter is the server's Retry-After on a 429, else zero.
	RetryAfter time.Duration
	// Body is the whole answer, for routes that add fields to the error
	// shape (a busy agent's {queued: false}).
	Body map[string]any
}

// Error says the status, the code (the status's text when the answer had
// none) and the server's message.
func (e *Error) Error() string {
	code := e.Code
	if code == "" {
		code = http.StatusText(e.Status)
	}
	s := fmt.Sprintf("agora: %d %s", e.Status, code)
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Unwrap maps the status back to the library's sentinel error the server
// answered it for, with the server's own table (a 404 is
// store.ErrNotFound, a 503 store.ErrUnavailable, a 429 ErrRateLimited);
// nil for a status no kind answers with.
func (e *Error) Unwrap() error { return httpjson.KindOf(e.Status) }

// send sends a request with an optional JSON body and returns the answer
// when its status is below 400, for the caller to read and close. An error
// answer comes back as an *Error; a request that ctx ended, as an error
// that errors.Is ctx.Err().
func (c *Client) send(ctx context.Context, method, path string, in any, header http.Header) (*http.Response, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return nil, ctxErr(ctx, err)
	}
	if res.StatusCode >= 400 {
		defer res.Body.Close()
		return nil, readError(res)
	}
	return res, nil
}

// do sends a request with an optional JSON body and decodes a JSON answer
// into out (when not nil).
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	res, err := c.send(ctx, method, path, in, nil)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return ctxErr(ctx, err)
	}
	if out == nil || len(data) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		// Not the server's JSON: a proxy or portal answered in its place.
		return fmt.Errorf("agora: %s %s answered %d (%s), not the JSON it answers: %w",
			method, path, res.StatusCode, res.Header.Get("Content-Type"), err)
	}
	return nil
}

// readError turns an error answer into an *Error.
func readError(res *http.Response) error {
	data, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	e := &Error{Status: res.StatusCode}
	if secs, err := strconv.Atoi(res.Header.Get("Retry-After")); err == nil && secs > 0 {
		e.RetryAfter = time.Duration(secs) * time.Second
	}
	var shape wire.Error
	if json.Unmarshal(data, &shape) == nil {
		e.Code, e.Message = shape.Error.Code, shape.Error.Message
	}
	_ = json.Unmarshal(data, &e.Body)
	if e.Message == "" {
		e.Message = excerpt(data)
	}
	return e
}

// maxExcerpt bounds the part of an answer that is not Agora's error object
// (a proxy's HTML page) an Error keeps as its message.
const maxExcerpt = 200

// excerpt is the start of data on one line: spaces and line breaks
// collapsed, at most maxExcerpt bytes of whole characters.
func excerpt(data []byte) string {
	s := strings.Join(strings.Fields(string(data[:min(len(data), 4*maxExcerpt)])), " ")
	if len(s) <= maxExcerpt {
		return s
	}
	cut := maxExcerpt
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// ctxErr makes sure an error caused by the end of ctx matches ctx.Err()
// with errors.Is, whichever layer of the transport noticed it.
func ctxErr(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("%w (%v)", cerr, err)
	}
	return err
}

func esc(s string) string { return url.PathEscape(s) }

// num is n for a query parameter, or "" (leave it out) when n is 0.
func num(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// query encodes the pairs of kv whose value is not empty.
func query(kv ...string) string {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			v.Set(kv[i], kv[i+1])
		}
	}
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}
