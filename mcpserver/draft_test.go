package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
)

// countingCalls counts the calls a session served directly.
type countingCalls struct {
	CallHandler
	n atomic.Int32
}

func (c *countingCalls) CallJSON(ctx context.Context, name string, args json.RawMessage) []byte {
	c.n.Add(1)
	return c.CallHandler.CallJSON(ctx, name, args)
}

// In a session of the 2026-07-28 draft the first tools/call goes through the
// go-sdk, which validates its _meta; later calls with the same _meta are
// served directly, and their responses are byte for byte what the go-sdk
// sent, with its _meta and "resultType", for results and isError results.
func TestDraftCallsServedDirectlyMatchSDK(t *testing.T) {
	sock := startDemo(t)
	srv := New(Config{DefaultSocket: sock, OutputSchemas: true, Logger: zerolog.Nop()}, loadExample(t))
	defer srv.Close()
	for _, tt := range []struct {
		name    string
		tool    string
		args    map[string]any
		isError bool
	}{
		{"result", "tairseach_demo_echo", map[string]any{"query": "anna", "limit": 5}, false},
		{"isError", "tairseach_demo_fail", map[string]any{}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			results, direct := draftSession(t, srv, func(cs *mcp.ClientSession) {
				for i := range 3 {
					res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tt.tool, Arguments: tt.args})
					if err != nil || res.IsError != tt.isError {
						t.Fatalf("call %d: %v %+v", i, err, res)
					}
				}
			})
			if direct != 2 {
				t.Errorf("%d of 3 calls served directly, want 2 (all but the first)", direct)
			}
			if len(results) != 3 {
				t.Fatalf("saw %d tool results, want 3", len(results))
			}
			id := regexp.MustCompile(`"id":\d+,`)
			sdk := id.ReplaceAll(results[0], nil)
			if !bytes.Contains(sdk, []byte(`"resultType":"complete"`)) || !bytes.Contains(sdk, []byte(`"_meta":{"io.modelcontextprotocol/serverInfo"`)) {
				t.Errorf("the go-sdk's draft result lacks the draft's fields: %s", sdk)
			}
			for _, r := range results[1:] {
				if got := id.ReplaceAll(r, nil); !bytes.Equal(got, sdk) {
					t.Errorf("served directly:\n%s\nthe go-sdk sent:\n%s", got, sdk)
				}
			}
		})
	}
}

// draftSession runs use in a stdio session of srv under the go-sdk client at
// its default protocol, the draft, and returns the tool results the server
// wrote and how many calls it served directly.
func draftSession(t *testing.T, srv *Server, use func(*mcp.ClientSession)) (results [][]byte, direct int) {
	t.Helper()
	calls := &countingCalls{CallHandler: srv}
	c2sR, c2sW := io.Pipe()
	s2cR, s2cW := io.Pipe()
	toClientR, toClientW := io.Pipe()
	var mu sync.Mutex
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		sc := bufio.NewScanner(s2cR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := bytes.Clone(sc.Bytes())
			if bytes.Contains(line, []byte(`"content":[`)) {
				mu.Lock()
				results = append(results, line)
				mu.Unlock()
			}
			if _, err := toClientW.Write(append(line, '\n')); err != nil {
				return
			}
		}
		toClientW.Close()
	}()
	ctx := context.Background()
	done := make(chan error, 1)
	go func() {
		done <- srv.ServeStdio(ctx, &StdioTransport{In: c2sR, Out: s2cW, Calls: calls, Logger: zerolog.Nop()})
		s2cW.Close()
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: toClientR, Writer: c2sW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s; this test needs the 2026-07-28 draft", v)
	}
	use(cs)
	cs.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	<-copied
	mu.Lock()
	defer mu.Unlock()
	return results, int(calls.n.Load())
}

// A _meta the go-sdk refuses is never learned, even once another _meta was:
// every such call gets the go-sdk's error, never a result served directly.
func TestDraftInvalidMetaNeverServedDirectly(t *testing.T) {
	sock := startDemo(t)
	srv := New(Config{DefaultSocket: sock, Logger: zerolog.Nop()}, loadExample(t))
	defer srv.Close()
	const call = `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"tairseach_demo_echo","arguments":{},"_meta":%s}}` + "\n"
	const good = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	const bad = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}` // no clientCapabilities

	inW, outR, done := serveOverPipes(srv)
	out := bufio.NewScanner(outR)
	roundTrip := func(id int, meta string) map[string]any {
		t.Helper()
		fmt.Fprintf(inW, call, id, meta)
		if !out.Scan() {
			t.Fatalf("no response to call %d", id)
		}
		var m map[string]any
		if err := json.Unmarshal(out.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	for id := 1; id <= 2; id++ { // the second is served directly
		if m := roundTrip(id, good); m["result"] == nil {
			t.Fatalf("call %d with a valid _meta: %v", id, m)
		}
	}
	for id := 3; id <= 4; id++ {
		if m := roundTrip(id, bad); m["error"] == nil {
			t.Errorf("call %d without clientCapabilities: got %v, want the go-sdk's error", id, m)
		}
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
