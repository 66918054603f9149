package demo

import (
	"context"
	"encoding/json"
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

// demoEcho returns its params unchanged, without copying them; absent or
// null params give {}. Of positional params, [contextToken, args], it returns
// args, since mcp-host-rpc would take an array result for MCP content.
func demoEcho(_ context.Context, params []byte) ([]byte, *rpcError) {
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

func demoSlow(ctx context.Context, params []byte) ([]byte, *rpcError) {
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

func demoFail(context.Context, []byte) ([]byte, *rpcError) {
	return nil, errContactsDenied
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

type blobParams struct {
	Bytes int `json:"bytes"`
}

// demoBlob answers {"data":"xxx…"} of params.bytes x's from the cache.
func (c *blobCache) demoBlob(_ context.Context, params []byte) ([]byte, *rpcError) {
	p := blobParams{Bytes: defaultBlobBytes}
	if e := decodeParams(params, &p); e != nil {
		return nil, e
	}
	if p.Bytes < 0 {
		return nil, invalidParams("bytes must not be negative")
	}
	return c.get(min(p.Bytes, maxBlobBytes)), nil
}
