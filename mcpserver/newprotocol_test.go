package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/mcpserver/stdio"
)

// countingCalls counts the calls a session served directly.
type countingCalls struct {
	stdio.CallHandler
	n atomic.Int32
}

func (c *countingCalls) CallDirect(ctx context.Context, d stdio.DirectCall) []byte {
	c.n.Add(1)
	return c.CallHandler.CallDirect(ctx, d)
}

// In a 2026-07-28 session, tools/call is served directly once the go-sdk
// has answered a request of the session (server/discover), and each result
// is byte for byte what the go-sdk sends with direct serving off, with its
// _meta and "resultType", for results and isError results.
func TestNewProtocolCallsServedDirectlyMatchSDK(t *testing.T) {
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
			use := func(cs *mcp.ClientSession) {
				for i := range 3 {
					res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tt.tool, Arguments: tt.args})
					if err != nil || res.IsError != tt.isError {
						t.Fatalf("call %d: %v %+v", i, err, res)
					}
				}
			}
			sdk, none := newProtocolSession(t, srv, true, use)
			if none != 0 {
				t.Errorf("%d calls served directly with direct serving off", none)
			}
			results, direct := newProtocolSession(t, srv, false, use)
			// The first call may reach the go-sdk: the transport serves
			// calls directly once the server's session is bound, just after
			// the go-sdk has answered server/discover, and a client on a
			// loaded machine can send its call in between (CI saw 2 of 3).
			if direct < 2 {
				t.Errorf("%d of 3 calls served directly, want at least the last 2", direct)
			}
			if len(results) != 3 || len(sdk) != 3 {
				t.Fatalf("saw %d and %d tool results, want 3", len(results), len(sdk))
			}
			if !bytes.Contains(sdk[0], []byte(`"resultType":"complete"`)) || !bytes.Contains(sdk[0], []byte(`"_meta":{"io.modelcontextprotocol/serverInfo"`)) {
				t.Errorf("the go-sdk's 2026-07-28 result lacks the revision's fields: %s", sdk[0])
			}
			for i := range results {
				if !bytes.Equal(results[i], sdk[i]) {
					t.Errorf("served directly:\n%s\nthe go-sdk sent:\n%s", results[i], sdk[i])
				}
			}
		})
	}
}

// newProtocolSession runs use in a stdio session of srv under the go-sdk
// client at its default protocol, 2026-07-28, and returns the tool results
// the server wrote and how many calls it served directly.
func newProtocolSession(t *testing.T, srv *Server, noDirect bool, use func(*mcp.ClientSession)) (results [][]byte, direct int) {
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
		done <- srv.ServeStdio(ctx, &stdio.Transport{In: c2sR, Out: s2cW, Calls: calls, NoDirect: noDirect, Logger: zerolog.Nop()})
		s2cW.Close()
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: toClientR, Writer: c2sW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s; this test needs 2026-07-28", v)
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

// A request whose _meta the spec makes invalid is never served directly,
// even once valid ones were: every such call gets the go-sdk's error.
func TestNewProtocolInvalidMetaNeverServedDirectly(t *testing.T) {
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
	// The server remembers the last _meta it classified: a valid one
	// after an invalid one, and the reverse, are each classified afresh.
	if m := roundTrip(5, good); m["result"] == nil {
		t.Errorf("call 5, a valid _meta again: %v", m)
	}
	if m := roundTrip(6, bad); m["error"] == nil {
		t.Errorf("call 6, without clientCapabilities again: got %v, want the go-sdk's error", m)
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
