package mcpserver

import (
	"bufio"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// clientNumbers are request ids and progress tokens a client may choose
// that a float64 does not carry as they were written, and strings the
// go-sdk would write otherwise.
var clientNumbers = []string{`9007199254740993`, `12345678901234567890`, `1e3`, `1.50`, `-0`, `-1.5E-7`, `"\u0041"`}

// idServer is a server of the examples that reports progress every 20 ms.
func idServer(t *testing.T) *Server {
	t.Helper()
	srv := New(Config{DefaultSocket: startDemo(t), Logger: zerolog.Nop(), ProgressInterval: 20 * time.Millisecond, Prefix: "tairseach_"}, loadExample(t))
	t.Cleanup(func() { srv.Close() })
	return srv
}

// rawLines reads the lines a stdio session writes.
type rawLines struct {
	t  *testing.T
	in io.Writer
	sc *bufio.Scanner
}

func (r *rawLines) send(line string) {
	r.t.Helper()
	if _, err := io.WriteString(r.in, line+"\n"); err != nil {
		r.t.Fatal(err)
	}
}

// until returns the lines written up to the first that contains want.
func (r *rawLines) until(want string) []string {
	r.t.Helper()
	var seen []string
	for r.sc.Scan() {
		seen = append(seen, r.sc.Text())
		if strings.Contains(r.sc.Text(), want) {
			return seen
		}
	}
	r.t.Fatalf("no line with %s; saw:\n%s", want, strings.Join(seen, "\n"))
	return nil
}

func startRaw(t *testing.T, srv *Server, noDirect bool) *rawLines {
	in, out, done := serveOverPipesWith(srv, noDirect)
	t.Cleanup(func() {
		in.Close()
		io.Copy(io.Discard, out)
		<-done
	})
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<20)
	r := &rawLines{t: t, in: in, sc: sc}
	r.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	r.until(`"id":0,`)
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return r
}

// A request id and a progress token come back byte for byte, whatever JSON
// number (or string) the client wrote: in the response, and in each
// progress notification. Over the go-sdk, a progress token of
// 9007199254740993 came back as 9007199254740992, 1e3 as 1000; on the
// direct path too, which decoded the token into a float64.
func TestStdioIDsAndTokensExact(t *testing.T) {
	for _, noDirect := range []bool{false, true} {
		t.Run(map[bool]string{false: "direct", true: "sdk"}[noDirect], func(t *testing.T) {
			t.Parallel()
			r := startRaw(t, idServer(t), noDirect)
			for _, v := range clientNumbers {
				r.send(`{"jsonrpc":"2.0","id":` + v + `,"method":"tools/call","params":{"name":"tairseach_demo_slow","arguments":{"ms":100},"_meta":{"progressToken":` + v + `}}}`)
				lines := r.until(`"result"`)
				last := lines[len(lines)-1]
				if !strings.HasPrefix(last, `{"jsonrpc":"2.0","id":`+v+`,"result"`) {
					t.Errorf("id %s: the response is %.120s", v, last)
				}
				progress := 0
				for _, l := range lines[:len(lines)-1] {
					if strings.Contains(l, "notifications/progress") {
						progress++
						if !strings.Contains(l, `"progressToken":`+v+`,`) {
							t.Errorf("token %s: a progress notification is %s", v, l)
						}
					}
				}
				if progress == 0 {
					t.Errorf("token %s: no progress notification before the response", v)
				}
			}
		})
	}
}

// A cancellation names its request by the client's id, exactly: of two
// calls whose ids a float64 makes equal, only the one named is cancelled.
func TestCancellationNamesTheExactRequest(t *testing.T) {
	for _, noDirect := range []bool{false, true} {
		t.Run(map[bool]string{false: "direct", true: "sdk"}[noDirect], func(t *testing.T) {
			t.Parallel()
			r := startRaw(t, idServer(t), noDirect)
			for _, id := range []string{`9007199254740993`, `9007199254740992`} { // the one cancelled first: it would be answered first
				r.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"tairseach_demo_slow","arguments":{"ms":300}}}`)
			}
			r.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9007199254740993}}`)
			lines := r.until(`{"jsonrpc":"2.0","id":9007199254740992,`)
			r.send(`{"jsonrpc":"2.0","id":"after","method":"ping"}`)
			lines = append(lines, r.until(`"id":"after"`)...)
			for _, l := range lines {
				if strings.HasPrefix(l, `{"jsonrpc":"2.0","id":9007199254740993,`) {
					t.Fatalf("the cancelled call was answered: %s", l)
				}
			}
			if !strings.Contains(lines[len(lines)-1], "result") {
				t.Fatalf("after the cancellation: %s", lines[len(lines)-1])
			}
		})
	}
}
