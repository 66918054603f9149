package demo

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/rs/zerolog"
)

// handle runs one line through a fresh connection state and returns what
// the server wrote. ctx is cancelled, so demo.slow and Delay return at once.
func handle(s *Server, c *connState, line []byte) []byte {
	var out bytes.Buffer
	c.w = bufio.NewWriter(&out)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s.handleLine(ctx, c, line)
	c.w.Flush()
	return out.Bytes()
}

// FuzzHandleLine checks that any line gets exactly one line of valid JSON
// back: null, a response object, or an array of them.
func FuzzHandleLine(f *testing.F) {
	for _, seed := range []string{
		``,
		`{`,
		`42`,
		`null`,
		`[]`,
		`[1,2]`,
		`{"jsonrpc":"2.0","id":1,"method":"server.status"}`,
		`{"jsonrpc":"2.0","method":"server.status"}`,
		`{"jsonrpc":"2.0","id":null,"method":"demo.echo","params":{"a":1}}`,
		`{"jsonrpc":"2.0","id":{"x":1},"method":"demo.echo","params":[1,2]}`,
		`{"jsonrpc":"2.0","id":"a","method":"demo.echo","params":{"s":"\u2028"}}`,
		`{"jsonrpc":"1.0","id":1,"method":"x"}`,
		`{"jsonrpc":"2.0","id":1,"method":7}`,
		`{"jsonrpc":"2.0","id":2,"method":"contacts.list","params":{"limit":3,"offset":2}}`,
		`{"jsonrpc":"2.0","id":2,"method":"contacts.search","params":["tok",{"query":"a"}]}`,
		`{"jsonrpc":"2.0","id":2,"method":"contacts.get","params":{"id":"c-001"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"demo.slow","params":{"ms":5}}`,
		`{"jsonrpc":"2.0","id":4,"method":"demo.blob","params":{"bytes":10}}`,
		`{"jsonrpc":"2.0","id":5,"method":"demo.fail"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"demo.echo"},{"jsonrpc":"2.0","method":"demo.echo"}]`,
	} {
		f.Add([]byte(seed))
	}
	s := New(zerolog.Nop(), Options{})
	c := &connState{}
	f.Fuzz(func(t *testing.T, line []byte) {
		if bytes.IndexByte(line, '\n') >= 0 {
			t.Skip("the reader splits lines at newlines")
		}
		out := handle(s, c, line)
		if len(out) == 0 || out[len(out)-1] != '\n' || bytes.IndexByte(out, '\n') != len(out)-1 {
			t.Fatalf("line %q: output %q is not exactly one line", line, out)
		}
		out = out[:len(out)-1]
		if !json.Valid(out) {
			t.Fatalf("line %q: output %q is not valid JSON", line, out)
		}
		switch out[0] {
		case 'n', '{', '[':
		default:
			t.Fatalf("line %q: output %q is not null, an object or an array", line, out)
		}
	})
}

func TestLineBufferReuse(t *testing.T) {
	s := New(zerolog.Nop(), Options{})
	c := &connState{}
	// A short request after a long one must not see the long one's params.
	handle(s, c, []byte(`{"jsonrpc":"2.0","id":1,"method":"demo.echo","params":{"long":"abcdefghijklmnop"}}`))
	out := handle(s, c, []byte(`{"jsonrpc":"2.0","id":2,"method":"demo.echo"}`))
	if want := `{"jsonrpc":"2.0","id":2,"result":{}}` + "\n"; string(out) != want {
		t.Errorf("got %s, want %s", out, want)
	}
	out = handle(s, c, []byte(`{"jsonrpc":"2.0","method":"demo.echo"}`))
	if string(out) != "null\n" {
		t.Errorf("notification after requests: got %s, want null", out)
	}
}

// BenchmarkHandleEcho measures the server's own cost for demo.echo, without
// the socket.
func BenchmarkHandleEcho(b *testing.B) {
	s := New(zerolog.Nop(), Options{})
	c := &connState{w: bufio.NewWriter(io.Discard)}
	line := []byte(`{"jsonrpc":"2.0","id":1,"method":"demo.echo","params":{"name":"tairseach","n":42,"tags":["a","b"]}}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		s.handleLine(ctx, c, line)
	}
}
