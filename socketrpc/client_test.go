package socketrpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/socketrpc"
)

func newClient(t testing.TB, path string, opts socketrpc.Options) *socketrpc.Client {
	opts.Logger = zerolog.Nop()
	c := socketrpc.New(path, opts)
	t.Cleanup(func() { c.Close() })
	return c
}

// mustEcho calls the echo method and checks its result.
func mustEcho(t testing.TB, c *socketrpc.Client, params string) {
	t.Helper()
	res, err := c.Call(context.Background(), "echo", json.RawMessage(params))
	if err != nil {
		t.Fatalf("echo: %v", err)
	}
	if want := `{"method":"echo","params":` + params + `}`; string(res) != want {
		t.Fatalf("echo result = %s, want %s", res, want)
	}
}

func TestRoundTrip(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	b := newBackend(t, func(w io.Writer, req request) bool {
		mu.Lock()
		lines = append(lines, req.Line)
		mu.Unlock()
		return echo(w, req)
	})
	c := newClient(t, b.path, socketrpc.Options{})
	if c.Path() != b.path {
		t.Errorf("Path() = %q, want %q", c.Path(), b.path)
	}

	tests := []struct {
		name     string
		method   string
		params   json.RawMessage
		wantLine string
		wantRes  string
	}{
		{"nil params", "server.status", nil,
			`{"jsonrpc":"2.0","id":1,"method":"server.status","params":{}}`,
			`{"method":"server.status","params":{}}`},
		{"object params", "contacts.list", json.RawMessage(`{"limit":5}`),
			`{"jsonrpc":"2.0","id":2,"method":"contacts.list","params":{"limit":5}}`,
			`{"method":"contacts.list","params":{"limit":5}}`},
		{"pretty params are compacted", "m", json.RawMessage("{\n  \"a\": [1, 2],\n  \"s\": \"x y\"\n}\n"),
			`{"jsonrpc":"2.0","id":3,"method":"m","params":{"a":[1,2],"s":"x y"}}`,
			`{"method":"m","params":{"a":[1,2],"s":"x y"}}`},
		{"method escaped", "a\"b\\c\n", json.RawMessage(`[]`),
			`{"jsonrpc":"2.0","id":4,"method":"a\"b\\c\n","params":[]}`,
			`{"method":"a\"b\\c\n","params":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := c.Call(context.Background(), tt.method, tt.params)
			if err != nil {
				t.Fatal(err)
			}
			if string(res) != tt.wantRes {
				t.Errorf("result = %s, want %s", res, tt.wantRes)
			}
			mu.Lock()
			got := lines[len(lines)-1]
			mu.Unlock()
			if got != tt.wantLine {
				t.Errorf("request line = %s, want %s", got, tt.wantLine)
			}
		})
	}
	if n := b.accepted.Load(); n != 1 {
		t.Errorf("sequential calls used %d connections, want 1", n)
	}
}

func TestInvalidParams(t *testing.T) {
	b := newBackend(t, echo)
	c := newClient(t, b.path, socketrpc.Options{})
	_, err := c.Call(context.Background(), "m", json.RawMessage(`{"a":`))
	if err == nil || !strings.Contains(err.Error(), "encoding params") {
		t.Fatalf("err = %v, want params error", err)
	}
	if n := b.requests.Load(); n != 0 {
		t.Errorf("server received %d requests, want 0", n)
	}
	mustEcho(t, c, `{"ok":1}`)
}

// replies answers each method with a fixed line in which ID stands for the
// request id.
func replies(m map[string]string) handlerFunc {
	return func(w io.Writer, req request) bool {
		tmpl, ok := m[req.Method]
		if !ok {
			return echo(w, req)
		}
		io.WriteString(w, strings.ReplaceAll(tmpl, "ID", string(req.ID)))
		return false
	}
}

func TestValidReplies(t *testing.T) {
	tests := []struct {
		name  string
		reply string
		want  string
	}{
		{"null result", `{"jsonrpc":"2.0","id":ID,"result":null}` + "\n", `null`},
		{"blank lines skipped", "\n\n  \t \r\n" + `{"jsonrpc":"2.0","id":ID,"result":1}` + "\n", `1`},
		{"null id with error", `{"jsonrpc":"2.0","id":null,"error":{"code":-32011,"message":"credential not found"}}` + "\n", ``},
		{"huge exponent in result", `{"jsonrpc":"2.0","id":ID,"result":{"n":1e999999}}` + "\n", `{"n":1e999999}`},
		// Passed on as it is; mcpserver repairs it where it writes messages.
		{"invalid UTF-8 in result", "{\"jsonrpc\":\"2.0\",\"id\":ID,\"result\":\"caf\xe9\"}\n", "\"caf\xe9\""},
		{"crlf and spaces", ` {"jsonrpc": "2.0", "result": [1, 2], "id": ID} ` + "\r\n", `[1, 2]`},
		{"null error beside result", `{"jsonrpc":"2.0","id":ID,"result":"x","error":null}` + "\n", `"x"`},
		{"id as 7.0", `{"jsonrpc":"2.0","id":ID.0,"result":true}` + "\n", `true`},
		{"id with exponent", `{"jsonrpc":"2.0","id":ID0e-1,"result":true}` + "\n", `true`},
		{"unknown members ignored", `{"jsonrpc":"2.0","id":ID,"result":{},"extra":[1]}` + "\n", `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBackend(t, replies(map[string]string{"m": tt.reply}))
			c := newClient(t, b.path, socketrpc.Options{})
			for range 2 {
				res, err := c.Call(context.Background(), "m", nil)
				var rpcErr *socketrpc.Error
				if tt.want == "" && errors.As(err, &rpcErr) && rpcErr.Code == -32011 {
					continue // the server's answer, with the id it could not read
				}
				if err != nil {
					t.Fatal(err)
				}
				if string(res) != tt.want {
					t.Fatalf("result = %s, want %s", res, tt.want)
				}
			}
			mustEcho(t, c, `{}`)
			if n := b.accepted.Load(); n != 1 {
				t.Errorf("used %d connections, want 1", n)
			}
		})
	}
}

func TestMalformedReplies(t *testing.T) {
	tests := []struct {
		name    string
		reply   string
		wantErr string
	}{
		{"garbage", "not json\n", "decoding reply"},
		{"array", "[1,2]\n", "decoding reply"},
		{"truncated object", `{"jsonrpc":"2.0","id":ID,"result":{` + "\n", "decoding reply"},
		{"wrong version", `{"jsonrpc":"1.0","id":ID,"result":1}` + "\n", `jsonrpc version is "\"1.0\""`},
		{"version as number", `{"jsonrpc":2.0,"id":ID,"result":1}` + "\n", "jsonrpc version"},
		{"no version", `{"id":ID,"result":1}` + "\n", "missing jsonrpc"},
		{"id mismatch", `{"jsonrpc":"2.0","id":ID000,"result":1}` + "\n", "does not match request id"},
		{"id as string", `{"jsonrpc":"2.0","id":"ID","result":1}` + "\n", "does not match request id"},
		{"no id", `{"jsonrpc":"2.0","result":1}` + "\n", "missing id"},
		{"null id with result", `{"jsonrpc":"2.0","id":null,"result":1}` + "\n", "does not match request id"},
		{"neither", `{"jsonrpc":"2.0","id":ID}` + "\n", "neither result nor error"},
		{"only null error", `{"jsonrpc":"2.0","id":ID,"error":null}` + "\n", "neither result nor error"},
		{"both", `{"jsonrpc":"2.0","id":ID,"result":1,"error":{"code":1,"message":"x"}}` + "\n", "both result and error"},
		{"error not object", `{"jsonrpc":"2.0","id":ID,"error":"boom"}` + "\n", "error member is not an object"},
		{"error without code", `{"jsonrpc":"2.0","id":ID,"error":{"message":"x"}}` + "\n", "no code"},
		{"error code not integer", `{"jsonrpc":"2.0","id":ID,"error":{"code":-32000.5,"message":"x"}}` + "\n", "decoding error object"},
		{"error message not string", `{"jsonrpc":"2.0","id":ID,"error":{"code":1,"message":7}}` + "\n", "decoding error object"},
		{"error code as string", `{"jsonrpc":"2.0","id":ID,"error":{"code":"-32001","message":"x"}}` + "\n", "decoding error object"},
		{"null line", "null\n", "a null line, as the server writes after a notification"},
		{"null line after blank lines", "\n \nnull\r\n", "a null line"},
		{"id twice, ours last", `{"jsonrpc":"2.0","id":987654321,"id":ID,"result":1}` + "\n", `duplicate "id" member`},
		{"id twice, ours first", `{"jsonrpc":"2.0","id":ID,"id":987654321,"result":1}` + "\n", `duplicate "id" member`},
		{"result twice", `{"jsonrpc":"2.0","id":ID,"result":1,"result":2}` + "\n", `duplicate "result" member`},
		{"error twice", `{"jsonrpc":"2.0","id":ID,"error":null,"error":{"code":1,"message":"x"}}` + "\n", `duplicate "error" member`},
		{"id with huge exponent", `{"jsonrpc":"2.0","id":1e999999,"result":1}` + "\n", "does not match request id"},
		{"deeply nested result", `{"jsonrpc":"2.0","id":ID,"result":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "}\n", "nesting deeper than 10000 levels"},
		{"pretty-printed over lines", "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": ID,\n  \"result\": 1\n}\n", "decoding reply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBackend(t, replies(map[string]string{"bad": tt.reply}))
			c := newClient(t, b.path, socketrpc.Options{})
			mustEcho(t, c, `{}`)
			res, err := c.Call(context.Background(), "bad", nil)
			var pe *socketrpc.ProtocolError
			var ce *socketrpc.CallError
			if !errors.Is(err, socketrpc.ErrProtocol) || !errors.As(err, &pe) || !errors.As(err, &ce) {
				t.Fatalf("Call = %s, %v; want a *CallError wrapping a *ProtocolError", res, err)
			}
			if ce.Method != "bad" || ce.Path != b.path || !strings.Contains(pe.Reason(), tt.wantErr) {
				t.Errorf("CallError{Method %q, Path %q}, ProtocolError.Reason %q; want bad, %s, containing %q", ce.Method, ce.Path, pe.Reason(), b.path, tt.wantErr)
			}
			for _, want := range []string{tt.wantErr, b.path, `"bad"`} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
			// The connection was closed; the next call works on a new one.
			mustEcho(t, c, `{"after":1}`)
			if n := b.accepted.Load(); n != 2 {
				t.Errorf("used %d connections, want 2", n)
			}
		})
	}
}

func TestErrorObjectPreserved(t *testing.T) {
	const errObj = `{ "code" : -32001,"message":"permission denied: contacts",` +
		`"data":{"permission":"contacts","status":"denied","remediation":"Open System Settings \u2192 Privacy"} }`
	b := newBackend(t, replies(map[string]string{
		"denied":  `{"jsonrpc":"2.0","id":ID,"error":` + errObj + "}\n",
		"nodata":  `{"jsonrpc":"2.0","id":ID,"error":{"code":-32601,"message":"method not found"}}` + "\n",
		"nullid":  `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}` + "\n",
		"nulldat": `{"jsonrpc":"2.0","error":{"code":-32000,"message":"x","data":null},"id":ID}` + "\n",
	}))
	c := newClient(t, b.path, socketrpc.Options{})

	tests := []struct {
		method      string
		code        int64
		message     string
		data, raw   string
		errContains string
	}{
		{"denied", -32001, "permission denied: contacts",
			`{"permission":"contacts","status":"denied","remediation":"Open System Settings \u2192 Privacy"}`, errObj,
			"server error -32001: permission denied: contacts"},
		{"nodata", -32601, "method not found", "", `{"code":-32601,"message":"method not found"}`, "-32601"},
		{"nullid", -32700, "parse error", "", `{"code":-32700,"message":"parse error"}`, "-32700"},
		{"nulldat", -32000, "x", "null", `{"code":-32000,"message":"x","data":null}`, "-32000"},
	}
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			res, err := c.Call(context.Background(), tt.method, nil)
			var rpcErr *socketrpc.Error
			if !errors.As(err, &rpcErr) {
				t.Fatalf("Call = %s, %v; want *Error", res, err)
			}
			if rpcErr.Code != tt.code || rpcErr.Message != tt.message {
				t.Errorf("code, message = %d, %q; want %d, %q", rpcErr.Code, rpcErr.Message, tt.code, tt.message)
			}
			if string(rpcErr.Data) != tt.data {
				t.Errorf("Data = %s, want %s", rpcErr.Data, tt.data)
			}
			if string(rpcErr.Raw) != tt.raw {
				t.Errorf("Raw = %s, want %s", rpcErr.Raw, tt.raw)
			}
			if !strings.Contains(err.Error(), tt.errContains) {
				t.Errorf("Error() = %q, want it to contain %q", err, tt.errContains)
			}
		})
	}
	// An error reply leaves the connection in step: it is reused.
	mustEcho(t, c, `{}`)
	if n := b.accepted.Load(); n != 1 {
		t.Errorf("used %d connections, want 1", n)
	}
}

func TestTooLarge(t *testing.T) {
	big := func(n int) string { return `"` + strings.Repeat("x", n) + `"` }
	tests := []struct {
		name    string
		max     int
		result  string
		wantErr bool
	}{
		{"over small limit", 1024, big(5000), true},
		{"over limit beyond read buffer", 40000, big(100000), true},
		{"just over", 1024, big(1024 - len(`{"jsonrpc":"2.0","id":2,"result":}`) - 1), true},
		{"exactly at limit", 1024, big(1024 - len(`{"jsonrpc":"2.0","id":2,"result":}`) - 2), false},
		{"long line within limit", 0, big(300000), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBackend(t, replies(map[string]string{"big": `{"jsonrpc":"2.0","id":ID,"result":` + tt.result + "}\n"}))
			c := newClient(t, b.path, socketrpc.Options{MaxResponseBytes: tt.max})
			mustEcho(t, c, `{}`) // id 1, so the big reply carries id 2
			res, err := c.Call(context.Background(), "big", nil)
			if !tt.wantErr {
				if err != nil {
					t.Fatal(err)
				}
				if string(res) != tt.result {
					t.Fatalf("result has %d bytes, want %d", len(res), len(tt.result))
				}
				return
			}
			var tl *socketrpc.TooLargeError
			if !errors.As(err, &tl) || !errors.Is(err, socketrpc.ErrTooLarge) {
				t.Fatalf("Call = %d bytes, %v; want *TooLargeError", len(res), err)
			}
			if tl.Limit != tt.max || tl.Size < tt.max+1 {
				t.Errorf("TooLargeError = %+v, want Limit %d and Size > Limit", tl, tt.max)
			}
			if !strings.Contains(err.Error(), b.path) {
				t.Errorf("error %q does not name the socket", err)
			}
			mustEcho(t, c, `{"after":1}`)
			if n := b.accepted.Load(); n != 2 {
				t.Errorf("used %d connections, want 2", n)
			}
		})
	}
}

func TestPoolLimitsConnections(t *testing.T) {
	var inflight, maxInflight atomic.Int64
	b := newBackend(t, func(w io.Writer, req request) bool {
		n := inflight.Add(1)
		for {
			m := maxInflight.Load()
			if n <= m || maxInflight.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
		inflight.Add(-1)
		return echo(w, req)
	})
	c := newClient(t, b.path, socketrpc.Options{PoolSize: 2})

	start := time.Now()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			mustEcho(t, c, fmt.Sprintf(`{"i":%d}`, i))
		})
	}
	wg.Wait()
	elapsed := time.Since(start)

	if n := b.accepted.Load(); n > 2 {
		t.Errorf("8 concurrent calls used %d connections, want at most 2", n)
	}
	if m := maxInflight.Load(); m != 2 {
		t.Errorf("max calls in flight = %d, want 2", m)
	}
	if elapsed < 4*50*time.Millisecond {
		t.Errorf("8 calls of 50ms, 2 at a time, took %v, want at least 200ms", elapsed)
	}
}

func TestConcurrentCalls(t *testing.T) {
	b := newBackend(t, echo)
	c := newClient(t, b.path, socketrpc.Options{})
	var wg sync.WaitGroup
	for g := range 64 {
		wg.Go(func() {
			for i := range 50 {
				params := fmt.Sprintf(`{"g":%d,"i":%d}`, g, i)
				res, err := c.Call(context.Background(), "echo", json.RawMessage(params))
				if err != nil {
					t.Error(err)
					return
				}
				if want := `{"method":"echo","params":` + params + `}`; string(res) != want {
					t.Errorf("result = %s, want %s", res, want)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := b.accepted.Load(); n > socketrpc.DefaultPoolSize {
		t.Errorf("used %d connections, want at most %d", n, socketrpc.DefaultPoolSize)
	}
}

func TestServerRestart(t *testing.T) {
	b := newBackend(t, echo)
	c := newClient(t, b.path, socketrpc.Options{})
	mustEcho(t, c, `{"n":1}`)
	b.stop()
	b.start()
	mustEcho(t, c, `{"n":2}`)
	mustEcho(t, c, `{"n":3}`)
	if n := b.accepted.Load(); n != 2 {
		t.Errorf("accepted %d connections, want 2", n)
	}
}

func TestServerDownAndBack(t *testing.T) {
	b := newBackend(t, echo)
	c := newClient(t, b.path, socketrpc.Options{})
	// Several idle connections, all of which the server will close.
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { mustEcho(t, c, `{}`) })
	}
	wg.Wait()
	b.stop()
	for range 2 {
		_, err := c.Call(context.Background(), "echo", nil)
		if !errors.Is(err, socketrpc.ErrUnavailable) {
			t.Fatalf("Call with server down = %v, want ErrUnavailable", err)
		}
	}
	b.start()
	for i := range 8 {
		mustEcho(t, c, fmt.Sprintf(`{"i":%d}`, i))
	}
}

func TestServerDropsReusedConnectionAfterReading(t *testing.T) {
	// The server reads the request of a reused connection and closes it
	// without a byte of reply: it may have run the request, so the client
	// must not send it again; the next call works on a new connection.
	var dropped atomic.Bool
	b := newBackend(t, func(w io.Writer, req request) bool {
		if req.Method == "drop" && dropped.CompareAndSwap(false, true) {
			return true
		}
		return echo(w, req)
	})
	c := newClient(t, b.path, socketrpc.Options{})
	mustEcho(t, c, `{}`)
	if _, err := c.Call(context.Background(), "drop", nil); !errors.Is(err, io.EOF) {
		t.Fatalf("Call = %v, want the EOF reported, not retried", err)
	}
	if r := b.requests.Load(); r != 2 {
		t.Errorf("backend saw %d requests, want 2: the dropped one must not be sent twice", r)
	}
	mustEcho(t, c, `{}`)
	if n := b.accepted.Load(); n != 2 {
		t.Errorf("accepted %d connections, want 2", n)
	}
}

func TestNoRetry(t *testing.T) {
	tests := []struct {
		name    string
		reused  bool   // make a call first so that the failing one reuses its connection
		reply   string // written before closing
		wantErr error
	}{
		{"fresh connection closed without reply", false, "", io.EOF},
		{"fresh connection closed mid-reply", false, `{"jsonrpc":"2.0","id":`, io.ErrUnexpectedEOF},
		{"reused connection closed mid-reply", true, `{"jsonrpc":"2.0","id":`, io.ErrUnexpectedEOF},
		{"reused connection closed after a blank line", true, "\n", io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBackend(t, func(w io.Writer, req request) bool {
				if req.Method == "fail" {
					io.WriteString(w, tt.reply)
					return true
				}
				return echo(w, req)
			})
			c := newClient(t, b.path, socketrpc.Options{})
			if tt.reused {
				mustEcho(t, c, `{}`)
			}
			before := b.requests.Load()
			_, err := c.Call(context.Background(), "fail", nil)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Call error = %v, want %v", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), b.path) {
				t.Errorf("error %q does not name the socket", err)
			}
			var ce *socketrpc.ClosedError
			if !errors.As(err, &ce) || ce.MidReply != (tt.reply != "") || ce.Fresh == tt.reused {
				t.Errorf("error %v: ClosedError %+v; want MidReply %v, Fresh %v", err, ce, tt.reply != "", !tt.reused)
			}
			if r := b.requests.Load() - before; r != 1 {
				t.Errorf("server received the request %d times, want once", r)
			}
			mustEcho(t, c, `{"after":1}`)
		})
	}
}
