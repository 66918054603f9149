package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver/check"
	"github.com/geilt/tairseach-mcp/mcpserver/policy"
	"github.com/geilt/tairseach-mcp/mcpserver/prompts"
	"github.com/geilt/tairseach-mcp/mcpserver/resources"
	"github.com/geilt/tairseach-mcp/mcpserver/stdio"
	"github.com/geilt/tairseach-mcp/mcpserver/streamable"
)

// ltManifest declares a tool, a resource, a template completed from a
// method and a prompt, whose answers are made of '<': six bytes each once
// written, escaped.
const ltManifest = `{"id": "lt",
 "tools": [
  {"name": "lt.text", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}},
  {"name": "lt.values", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}}
 ],
 "implementation": {"methods": {"lt.text": "lt.text", "lt.values": "lt.values"}},
 "resources": [
  {"uri": "lt://text", "name": "text", "method": "lt.text", "mimeType": "text/plain"},
  {"uriTemplate": "lt://t/{id}", "name": "t", "method": "lt.text", "complete": {"id": "lt.values"}}
 ],
 "prompts": [
  {"name": "say", "template": "say {{a}}", "arguments": [{"name": "a"}]}
 ]}`

// wireLimit is the --max-result-bytes of the wire tests.
const wireLimit = 16 << 10

// startLT serves the lt methods on a Unix socket: lt.text replies with
// {"text": n '<'} (n from the params, else 5,000: 5 KB read, 30 KB
// written), lt.values with 100 values of 200 '<' (20 KB read and
// written: completion values are written without escaping HTML).
func startLT(t *testing.T) string {
	t.Helper()
	return fakeBackend(t, func(method string, params json.RawMessage) string {
		if method == "lt.values" {
			var vals []string
			for i := range 100 {
				vals = append(vals, fmt.Sprintf(`"%s%d"`, strings.Repeat("<", 200), i))
			}
			return `"result":{"items":[` + strings.Join(vals, ",") + `]}`
		}
		var p struct {
			N int `json:"n"`
		}
		_ = json.Unmarshal(params, &p)
		if p.N == 0 {
			p.N = 5000
		}
		return `"result":{"text":"` + strings.Repeat("<", p.N) + `"}`
	})
}

// wireTap keeps the length of the longest message written to a client.
type wireTap struct {
	mu      sync.Mutex
	longest int
}

func (w *wireTap) saw(n int) {
	w.mu.Lock()
	w.longest = max(w.longest, n)
	w.mu.Unlock()
}

func (w *wireTap) take() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.longest
	w.longest = 0
	return n
}

// lines is an io.Writer that reports each line written to tap.
type lines struct {
	w    io.Writer
	tap  *wireTap
	part int
}

func (l *lines) Write(p []byte) (int, error) {
	for rest := p; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			l.part += len(rest)
			break
		}
		l.tap.saw(l.part + i)
		l.part, rest = 0, rest[i+1:]
	}
	return l.w.Write(p)
}

// tapTransport reports each message of an HTTP response: a JSON body, or
// each data line of an event stream. It adds header to each request (a
// header selection).
type tapTransport struct {
	tap    *wireTap
	header http.Header
}

func (tr tapTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if tr.header != nil {
		r = r.Clone(r.Context())
		for k, v := range tr.header {
			r.Header[k] = v
		}
	}
	res, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return res, err
	}
	pr, pw := io.Pipe()
	body := res.Body
	go func() {
		defer body.Close()
		if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
			br := bufio.NewReaderSize(body, 1<<20)
			for {
				line, err := br.ReadBytes('\n')
				if after, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
					tr.tap.saw(len(bytes.TrimRight(after, "\n")))
				}
				pw.Write(line)
				if err != nil {
					pw.CloseWithError(err)
					return
				}
			}
		}
		b, err := io.ReadAll(body)
		tr.tap.saw(len(bytes.TrimSpace(b)))
		pw.Write(b)
		pw.CloseWithError(err)
	}()
	res.Body = pr
	return res, nil
}

// wireEnv is a server of ltManifest on one path, and a client whose
// received messages are measured.
type wireEnv struct {
	cs  *mcp.ClientSession
	tap *wireTap
}

func newWireEnv(t *testing.T, rd reqPath, header http.Header) *wireEnv {
	t.Helper()
	f, err := manifest.ParseFile("lt.json", []byte(ltManifest), manifest.Options{Prefix: "t_"})
	if err != nil {
		t.Fatal(err)
	}
	reg := manifest.Build([]*manifest.File{f})
	res := resources.New(resources.Config{Logger: zerolog.Nop()})
	ps := prompts.New(prompts.Config{MaxBytes: wireLimit, Logger: zerolog.Nop()})
	res.Update(reg)
	ps.Update(reg)
	srv := New(Config{DefaultSocket: startLT(t), Logger: zerolog.Nop(), MaxResultBytes: wireLimit, Prefix: "t_",
		Features: []Feature{res, ps}}, reg)
	t.Cleanup(func() { srv.Close() })
	e := &wireEnv{tap: &wireTap{}}
	var tr mcp.Transport
	if rd.transport == "http" {
		hs := httptest.NewServer(srv.NewHTTPHandler(streamable.Config{Stateless: rd.stateless}))
		t.Cleanup(func() {
			hs.CloseClientConnections()
			hs.Close()
		})
		tr = &mcp.StreamableClientTransport{Endpoint: hs.URL + streamable.MCPPath, HTTPClient: &http.Client{Transport: tapTransport{e.tap, header}}}
	} else {
		c2sR, c2sW := io.Pipe()
		s2cR, s2cW := io.Pipe()
		done := make(chan error, 1)
		go func() {
			done <- srv.ServeStdio(context.Background(), &stdio.Transport{In: c2sR, Out: &lines{w: s2cW, tap: e.tap}, NoDirect: rd.noDirect, Logger: zerolog.Nop()})
			s2cW.Close()
		}()
		t.Cleanup(func() {
			c2sW.Close()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Error("the stdio session did not end after its input did")
			}
		})
		tr = &mcp.IOTransport{Reader: s2cR, Writer: c2sW}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "wire", Version: "1"}, nil).Connect(context.Background(), tr,
		&mcp.ClientSessionOptions{ProtocolVersion: rd.protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	e.cs = cs
	return e
}

// Every kind of request is held to --max-result-bytes by the message as
// it is written: a backend reply of 5,000 '<' is 5 KB read but 30 KB
// written, over a limit of 16 KiB. Before, resource reads, template reads,
// prompts and completions sent it; a tool call refused it. HTTP paths are
// also taken with a header selection, whose server is another go-sdk
// server.
func TestEveryLimitCountsTheWrittenBytes(t *testing.T) {
	ctx := context.Background()
	refused := func(t *testing.T, what string, err error, res *mcp.CallToolResult) {
		t.Helper()
		msg := ""
		switch {
		case err != nil:
			msg = err.Error()
		case res != nil && res.IsError:
			msg = check.ResultText(res)
		}
		if !strings.Contains(msg, "over the limit of 16384 (--max-result-bytes)") {
			t.Errorf("%s: %v %v; want a refusal naming the limit", what, err, res)
		}
	}
	type wirePath struct {
		reqPath
		header http.Header
	}
	var wirePaths []wirePath
	for _, rd := range reqPaths() {
		if rd.discover != "" {
			continue
		}
		wirePaths = append(wirePaths, wirePath{reqPath: rd})
		if rd.transport == "http" {
			sel := wirePath{reqPath: rd, header: http.Header{policy.HeaderTools: {"t_lt_text,t_lt_values"}}}
			sel.name += "/selection"
			wirePaths = append(wirePaths, sel)
		}
	}
	for _, rd := range wirePaths {
		t.Run(rd.name, func(t *testing.T) {
			t.Parallel()
			e := newWireEnv(t, rd.reqPath, rd.header)
			kinds := []struct {
				name string
				do   func() (*mcp.CallToolResult, error)
			}{
				{"tools/call", func() (*mcp.CallToolResult, error) {
					return e.cs.CallTool(ctx, &mcp.CallToolParams{Name: "t_lt_text", Arguments: map[string]any{}})
				}},
				{"tools/call within the limit", func() (*mcp.CallToolResult, error) {
					res, err := e.cs.CallTool(ctx, &mcp.CallToolParams{Name: "t_lt_text", Arguments: map[string]any{"n": 2000}})
					if err == nil && res.IsError {
						t.Errorf("a result of 12 KB written was refused: %s", check.ResultText(res))
					}
					return nil, nil
				}},
				{"tools/call of a tool whose name the error quotes", func() (*mcp.CallToolResult, error) {
					return e.cs.CallTool(ctx, &mcp.CallToolParams{Name: strings.Repeat("<", 5000), Arguments: map[string]any{}})
				}},
				{"resources/read", func() (*mcp.CallToolResult, error) {
					_, err := e.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "lt://text"})
					return nil, err
				}},
				{"resources/read of a template", func() (*mcp.CallToolResult, error) {
					_, err := e.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "lt://t/1"})
					return nil, err
				}},
				{"prompts/get", func() (*mcp.CallToolResult, error) {
					_, err := e.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "say", Arguments: map[string]string{"a": strings.Repeat("<", 5000)}})
					return nil, err
				}},
				{"completion/complete", func() (*mcp.CallToolResult, error) {
					_, err := e.cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "lt://t/{id}"},
						Argument: mcp.CompleteParamsArgument{Name: "id", Value: ""}})
					return nil, err
				}},
			}
			for _, k := range kinds {
				e.tap.take()
				res, err := k.do()
				if !strings.Contains(k.name, "within") {
					refused(t, k.name, err, res)
				}
				if n := e.tap.take(); n > wireLimit {
					t.Errorf("%s: a message of %d bytes was written, over the limit of %d", k.name, n, wireLimit)
				}
			}
		})
	}
}
