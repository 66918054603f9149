package demo

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/geilt/tairseach-mcp/internal/jsonenc"
)

// Limits of the demo methods.
const (
	defaultSlowMs    = 1000
	maxSlowMs        = 60000
	defaultBlobBytes = 1024
	maxBlobBytes     = 100 << 20
	defaultListLimit = 100
	defaultFindLimit = 50
)

// decodeParams decodes a call's params into v, which holds the defaults.
// Absent or null params keep them. Params may also be positional,
// [contextToken, args], as the mcp-host-rpc bridge sends them; args is used.
func decodeParams(params []byte, v any) *rpcError {
	if len(params) == 0 || string(params) == "null" {
		return nil
	}
	if params[0] == '[' {
		args, ok := positionalArgs(params)
		if !ok {
			return invalidParams("params must be an object or [contextToken, args]")
		}
		params = args
	}
	if len(params) == 0 || params[0] != '{' {
		return invalidParams("params must be an object")
	}
	if err := json.Unmarshal(params, v); err != nil {
		return invalidParams("invalid params: " + err.Error())
	}
	return nil
}

// positionalArgs returns args from params of the form [contextToken, args].
func positionalArgs(params []byte) (args []byte, ok bool) {
	var pos []json.RawMessage
	if err := json.Unmarshal(params, &pos); err != nil || len(pos) != 2 {
		return nil, false
	}
	return pos[1], true
}

func invalidParams(msg string) *rpcError {
	return &rpcError{Code: codeInvalidParams, Message: msg}
}

func marshalResult(v any) ([]byte, *rpcError) {
	b, err := jsonenc.Marshal(v)
	if err != nil {
		return nil, &rpcError{Code: codeInternalError, Message: "encoding result: " + err.Error()}
	}
	return b, nil
}

type statusResult struct {
	Status        string   `json:"status"`
	Version       string   `json:"version"`
	UptimeSeconds int64    `json:"uptimeSeconds"`
	Methods       []string `json:"methods"`
}

func (s *Server) serverStatus(context.Context, []byte) ([]byte, *rpcError) {
	return marshalResult(statusResult{
		Status:        "ok",
		Version:       s.opts.Version,
		UptimeSeconds: int64(time.Since(s.started) / time.Second),
		Methods:       s.names,
	})
}

type listParams struct {
	Limit  int `json:"limit"`
	Offset int `json:"offset"`
}

type listResult struct {
	Contacts []contact `json:"contacts"`
	Count    int       `json:"count"` // all contacts, not just this page
	Limit    int       `json:"limit"`
	Offset   int       `json:"offset"`
}

func (s *Server) contactsList(_ context.Context, params []byte) ([]byte, *rpcError) {
	p := listParams{Limit: defaultListLimit}
	contacts := contacts
	if n := s.opts.AddressBook; n > 0 {
		// The real server's list: whole unless a limit is given.
		contacts, p.Limit = s.book(n), n
	}
	if e := decodeParams(params, &p); e != nil {
		return nil, e
	}
	if p.Limit < 1 {
		return nil, invalidParams("limit must be at least 1")
	}
	if p.Offset < 0 {
		return nil, invalidParams("offset must not be negative")
	}
	lo := min(p.Offset, len(contacts))
	hi := lo + min(p.Limit, len(contacts)-lo)
	return marshalResult(listResult{Contacts: contacts[lo:hi], Count: len(contacts), Limit: p.Limit, Offset: p.Offset})
}

type getParams struct {
	ID string `json:"id"`
}

func (s *Server) contactsGet(_ context.Context, params []byte) ([]byte, *rpcError) {
	var p getParams
	if e := decodeParams(params, &p); e != nil {
		return nil, e
	}
	if p.ID == "" {
		return nil, invalidParams("missing required param: id")
	}
	for i := range contacts {
		if contacts[i].ID == p.ID {
			return marshalResult(&contacts[i])
		}
	}
	return nil, &rpcError{Code: codeNotFound, Message: "contact not found: " + p.ID}
}

type searchParams struct {
	Query string `json:"query"`
	Limit int    `json:"limit"`
}

type searchResult struct {
	Query    string    `json:"query"`
	Contacts []contact `json:"contacts"`
	Count    int       `json:"count"` // contacts returned
}

func (s *Server) contactsSearch(_ context.Context, params []byte) ([]byte, *rpcError) {
	p := searchParams{Limit: defaultFindLimit}
	if e := decodeParams(params, &p); e != nil {
		return nil, e
	}
	if p.Query == "" {
		return nil, invalidParams("missing required param: query")
	}
	if p.Limit < 1 {
		return nil, invalidParams("limit must be at least 1")
	}
	lq := strings.ToLower(p.Query)
	found := make([]contact, 0, min(p.Limit, len(contacts)))
	for i := range contacts {
		if len(found) == p.Limit {
			break
		}
		if contacts[i].matches(lq) {
			found = append(found, contacts[i])
		}
	}
	return marshalResult(searchResult{Query: p.Query, Contacts: found, Count: len(found)})
}

// demoEcho returns its params unchanged, without copying them; absent or
// null params give {}. Of positional params, [contextToken, args], it returns
// args, since mcp-host-rpc would take an array result for MCP content.
func (s *Server) demoEcho(_ context.Context, params []byte) ([]byte, *rpcError) {
	if len(params) == 0 || string(params) == "null" {
		return []byte("{}"), nil
	}
	if params[0] == '[' {
		if args, ok := positionalArgs(params); ok {
			return args, nil
		}
	}
	return params, nil
}

type slowParams struct {
	Ms int `json:"ms"`
}

type slowResult struct {
	SleptMs int `json:"sleptMs"`
}

func (s *Server) demoSlow(ctx context.Context, params []byte) ([]byte, *rpcError) {
	p := slowParams{Ms: defaultSlowMs}
	if e := decodeParams(params, &p); e != nil {
		return nil, e
	}
	if p.Ms < 0 {
		return nil, invalidParams("ms must not be negative")
	}
	ms := min(p.Ms, maxSlowMs)
	t := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return nil, errShuttingDown
	}
	return marshalResult(slowResult{SleptMs: ms})
}

// errContactsDenied is what Tairseach answers when macOS has not granted it
// access to Contacts.
var errContactsDenied = &rpcError{
	Code:    codePermissionDenied,
	Message: "permission denied: contacts",
	Data: json.RawMessage(`{"permission":"contacts","status":"denied",` +
		`"remediation":"Open System Settings → Privacy & Security → Contacts and allow Tairseach"}`),
}

func (s *Server) demoFail(context.Context, []byte) ([]byte, *rpcError) {
	return nil, errContactsDenied
}

type blobParams struct {
	Bytes int `json:"bytes"`
}

func (s *Server) demoBlob(_ context.Context, params []byte) ([]byte, *rpcError) {
	p := blobParams{Bytes: defaultBlobBytes}
	if e := decodeParams(params, &p); e != nil {
		return nil, e
	}
	if p.Bytes < 0 {
		return nil, invalidParams("bytes must not be negative")
	}
	return s.blob.get(min(p.Bytes, maxBlobBytes)), nil
}

// blobCache keeps the last demo.blob result, so that repeated calls for one
// size (as in a benchmark) cost nothing to build. A result is never modified
// once built, so connections may write it concurrently.
type blobCache struct {
	mu     sync.Mutex // guards n and result
	n      int
	result []byte
}

// get returns {"data":"xxx…"} with n x's.
func (c *blobCache) get(n int) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.result == nil || c.n != n {
		const head, tail = `{"data":"`, `"}`
		b := make([]byte, len(head)+n+len(tail))
		copy(b, head)
		data := b[len(head) : len(head)+n]
		for i := range data {
			data[i] = 'x'
		}
		copy(b[len(head)+n:], tail)
		c.n, c.result = n, b
	}
	return c.result
}

// matches reports whether the lower-case query lq occurs, ignoring case, in
// the contact's name, organization or email addresses.
func (c *contact) matches(lq string) bool {
	for _, f := range [...]string{c.FullName, c.Organization} {
		if strings.Contains(strings.ToLower(f), lq) {
			return true
		}
	}
	for _, e := range c.Emails {
		if strings.Contains(strings.ToLower(e), lq) {
			return true
		}
	}
	return false
}
