package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// fakeServer is the other end of a wire: it reads the requests and lets
// the test write the replies.
type fakeServer struct {
	requests *bufio.Reader
	replies  *io.PipeWriter
}

func newWireForTest(t *testing.T) (*wire, fakeServer) {
	t.Helper()
	inR, inW := io.Pipe()   // the server's stdin
	outR, outW := io.Pipe() // its stdout
	w := newWire(inW, outR)
	t.Cleanup(func() { outW.Close(); inR.Close() })
	return w, fakeServer{requests: bufio.NewReader(inR), replies: outW}
}

// id reads one request and returns its id.
func (f fakeServer) id(t *testing.T) string {
	t.Helper()
	line, err := f.requests.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	start, end, ok := idSpan([]byte(line))
	if !ok {
		t.Fatalf("no id in %q", line)
	}
	return line[start:end]
}

// The wire answers each call with its own reply, in whatever order the
// server sends them, in either server's form; a reply that differs from the
// expected one is an error; other lines go to the go-sdk session; and no
// call waits past the end of the server's output.
func TestWire(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w, srv := newWireForTest(t)
	head, tail := []byte(`{"jsonrpc":"2.0","id":`), []byte(`,"method":"tools/call"}`+"\n")
	want := newExpect([]byte(`{"jsonrpc":"2.0","id":1,"result":{"x":1}}`+"\n"), len(`{"jsonrpc":"2.0","id":`), len(`{"jsonrpc":"2.0","id":1`))

	errs := make(chan error, 3)
	for i := range 3 {
		go func() { _, err := w.call(ctx, i, head, tail, want); errs <- err }()
	}
	ids := []string{srv.id(t), srv.id(t), srv.id(t)}
	go func() {
		fmt.Fprintf(srv.replies, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`+"\n")
		fmt.Fprintf(srv.replies, `{"jsonrpc":"2.0","id":%s,"result":{"x":1}}`+"\n", ids[2])
		fmt.Fprintf(srv.replies, `{"jsonrpc":"2.0","id":%s,"result":{"x":1}}`+"\n", ids[0])
		fmt.Fprintf(srv.replies, `{"jsonrpc":"2.0","id":%s,"result":{"x":2}}`+"\n", ids[1]) // differs
	}()
	sdk := bufio.NewReader(w.sdkReader())
	if line, err := sdk.ReadString('\n'); err != nil || !strings.Contains(line, "list_changed") {
		t.Errorf("the go-sdk session got %q, %v; want the notification", line, err)
	}
	var failed int
	for range 3 {
		if err := <-errs; err != nil {
			failed++
			if !strings.Contains(err.Error(), "differs") {
				t.Errorf("error %v, want one saying the reply differs", err)
			}
		}
	}
	if failed != 1 {
		t.Errorf("%d calls failed, want 1 (the reply that differs)", failed)
	}

	// The TypeScript SDK's form: the id last.
	go func() {
		id := srv.id(t)
		fmt.Fprintf(srv.replies, `{"result":{"x":1},"jsonrpc":"2.0","id":%s}`+"\n", id)
	}()
	c, err := w.call(ctx, 0, head, tail, nil)
	if err != nil || !strings.HasPrefix(string(c.line), `{"result":{"x":1}`) {
		t.Errorf("an id-last reply: %v, %q", err, c.line)
	}

	// The server's output ends with a call waiting, and then with none.
	go func() { srv.id(t); srv.replies.Close() }()
	if _, err := w.call(ctx, 0, head, tail, want); err == nil || ctx.Err() != nil {
		t.Errorf("a call when the output ends: %v (context: %v); want an error at once", err, ctx.Err())
	}
	go func() { _, _ = io.Copy(io.Discard, srv.requests) }()
	if _, err := w.call(ctx, 0, head, tail, want); err == nil || ctx.Err() != nil {
		t.Errorf("a call after the output ended: %v (context: %v); want an error at once", err, ctx.Err())
	}
	if n := w.stray.Load(); n != 0 {
		t.Errorf("%d stray replies, want 0", n)
	}
}
