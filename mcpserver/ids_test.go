package mcpserver

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/mcpserver/streamable"
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
				checkExactAnswer(t, v, r.until(`"result"`))
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

// httpRaw posts raw JSON-RPC messages to a server's /mcp and returns the
// raw lines of each answer.
type httpRaw struct {
	t       *testing.T
	url     string
	session string
	header  map[string]string
}

func (h *httpRaw) post(body string) []string {
	h.t.Helper()
	lines, err := h.do(body)
	if err != nil {
		h.t.Fatal(err)
	}
	return lines
}

// do posts body; it may be called from any goroutine.
func (h *httpRaw) do(body string) ([]string, error) {
	req, err := http.NewRequest(http.MethodPost, h.url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range h.header {
		req.Header.Set(k, v)
	}
	if h.session != "" {
		req.Header.Set(streamable.SessionIDHeader, h.session)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if s := res.Header.Get(streamable.SessionIDHeader); s != "" {
		h.session = s
	}
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 300 {
		return nil, fmt.Errorf("POST %s: %s %s", body, res.Status, b)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if d, ok := strings.CutPrefix(l, "data: "); ok {
			out = append(out, d)
		} else if strings.HasPrefix(l, "{") {
			out = append(out, l)
		}
	}
	return out, nil
}

// Over HTTP, stateful and stateless, an id and a progress token come back
// byte for byte too; the go-sdk made 1.50 and 1e3 ids 1 and 1000.
func TestHTTPIDsAndTokensExact(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		t.Run(map[bool]string{false: "stateful", true: "stateless"}[stateless], func(t *testing.T) {
			t.Parallel()
			hs := httptest.NewServer(idServer(t).NewHTTPHandler(streamable.Config{Stateless: stateless}))
			t.Cleanup(hs.Close)
			h := &httpRaw{t: t, url: hs.URL + streamable.MCPPath}
			meta := ""
			if stateless {
				h.header = map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "tairseach_demo_slow"}
				meta = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},`
			} else {
				h.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
				h.header = map[string]string{"Mcp-Protocol-Version": "2025-11-25"}
				h.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			}
			for _, v := range clientNumbers {
				lines := h.post(`{"jsonrpc":"2.0","id":` + v + `,"method":"tools/call","params":{"name":"tairseach_demo_slow","arguments":{"ms":100},"_meta":{` + meta + `"progressToken":` + v + `}}}`)
				checkExactAnswer(t, v, lines)
			}
		})
	}
}

// Over HTTP a cancellation names its request exactly, as on stdio: the
// go-sdk took 9007199254740992 and 9007199254740993 for one id.
func TestHTTPCancellationNamesTheExactRequest(t *testing.T) {
	hs := httptest.NewServer(idServer(t).NewHTTPHandler(streamable.Config{}))
	t.Cleanup(hs.Close)
	h := &httpRaw{t: t, url: hs.URL + streamable.MCPPath}
	h.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	h.header = map[string]string{"Mcp-Protocol-Version": "2025-11-25"}
	h.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	answers := make(chan []string, 2)
	for _, id := range []string{`9007199254740993`, `9007199254740992`} {
		go func() {
			lines, _ := (&httpRaw{url: h.url, session: h.session, header: h.header}).do(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"tairseach_demo_slow","arguments":{"ms":400}}}`)
			answers <- lines
		}()
	}
	time.Sleep(100 * time.Millisecond) // both in flight
	h.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9007199254740993}}`)
	var results []string
	for range 2 {
		for _, l := range <-answers {
			if strings.Contains(l, `"result"`) {
				results = append(results, l[:min(len(l), 40)])
			}
		}
	}
	if len(results) != 1 || !strings.HasPrefix(results[0], `{"jsonrpc":"2.0","id":9007199254740992,`) {
		t.Fatalf("results %q; want only the one of 9007199254740992 (9007199254740993 was cancelled)", results)
	}
}

// A batch of a 2025-03-26 client keeps each message's id too.
func TestHTTPBatchIDsExact(t *testing.T) {
	hs := httptest.NewServer(idServer(t).NewHTTPHandler(streamable.Config{}))
	t.Cleanup(hs.Close)
	h := &httpRaw{t: t, url: hs.URL + streamable.MCPPath}
	h.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	h.header = map[string]string{"Mcp-Protocol-Version": "2025-03-26"}
	h.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	lines := h.post(`[{"jsonrpc":"2.0","id":1.50,"method":"ping"}, {"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":{"name":"tairseach_demo_echo","arguments":{}}}]`)
	all := strings.Join(lines, "\n")
	for _, id := range []string{`1.50`, `9007199254740993`} {
		if !strings.Contains(all, `{"jsonrpc":"2.0","id":`+id+`,"result"`) {
			t.Errorf("no response with the id %s:\n%s", id, all)
		}
	}
}

// checkExactAnswer checks the lines a client got for its call of id v with
// progress token v: at least one progress notification naming v exactly,
// then the response naming v exactly.
func checkExactAnswer(t *testing.T, v string, lines []string) {
	t.Helper()
	if len(lines) == 0 {
		t.Fatalf("id %s: no answer", v)
	}
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, `{"jsonrpc":"2.0","id":`+v+`,"result"`) {
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

// A notifications/cancelled in the same batch (2025-03-26) as the request
// it names cancels that request, and no other: the go-sdk knows the
// request by our id, and 9007199254740993, as a float64, is the
// 9007199254740992 of another call in flight.
func TestHTTPBatchCancellationNamesItsRequest(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		t.Run(map[bool]string{false: "stateful", true: "stateless"}[stateless], func(t *testing.T) {
			t.Parallel()
			hs := httptest.NewServer(idServer(t).NewHTTPHandler(streamable.Config{Stateless: stateless}))
			t.Cleanup(hs.Close)
			h := &httpRaw{t: t, url: hs.URL + streamable.MCPPath}
			h.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
			h.header = map[string]string{"Mcp-Protocol-Version": "2025-03-26"}
			h.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			other := make(chan []string, 1)
			if !stateless { // in a session, another call in flight that the cancellation must not reach
				go func() {
					lines, _ := (&httpRaw{url: h.url, session: h.session, header: h.header}).do(`{"jsonrpc":"2.0","id":9007199254740992,"method":"tools/call","params":{"name":"tairseach_demo_slow","arguments":{"ms":600}}}`)
					other <- lines
				}()
				time.Sleep(100 * time.Millisecond) // in flight
			}
			start := time.Now()
			batch := strings.Join(h.post(`[{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":{"name":"tairseach_demo_slow","arguments":{"ms":600}}},`+
				`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9007199254740993}}]`), "\n")
			if strings.Contains(batch, `"result"`) {
				t.Errorf("the call cancelled in its batch was answered (after %v):\n%s", time.Since(start), batch)
			}
			if !stateless {
				if lines := strings.Join(<-other, "\n"); !strings.Contains(lines, `{"jsonrpc":"2.0","id":9007199254740992,"result"`) {
					t.Errorf("the other call in flight was not answered:\n%s", lines)
				}
			}
		})
	}
}

// What a result holds is the client's as it was, even where it reads as
// the text of one of our private ids (a backend echoing it, or arguments
// the model chose): only the id of each message and the progress token of
// each notification are the client's put back. Replacing the text across
// the response made such a value the client's id, a number, or broke the
// JSON ("\"…" gave "\9007…").
func TestHTTPContentEchoingOurIDsIsKept(t *testing.T) {
	var args []string
	for n := 1; n <= 8; n++ {
		for _, kind := range []string{"id", "progress"} {
			ours := `\u0000` + kind + `:` + strconv.Itoa(n)
			args = append(args, fmt.Sprintf(`"%s%d":"%s","q%s%d":"\"%s"`, kind, n, ours, kind, n, ours))
		}
	}
	arguments := "{" + strings.Join(args, ",") + "}"
	for _, stateless := range []bool{false, true} {
		t.Run(map[bool]string{false: "stateful", true: "stateless"}[stateless], func(t *testing.T) {
			t.Parallel()
			// structuredContent (--output-schemas=strict) carries the
			// arguments as JSON strings of the message itself.
			srv := New(Config{DefaultSocket: startDemo(t), Logger: zerolog.Nop(), ProgressInterval: 20 * time.Millisecond, Prefix: "tairseach_", OutputSchemas: true}, loadExample(t))
			t.Cleanup(func() { srv.Close() })
			hs := httptest.NewServer(srv.NewHTTPHandler(streamable.Config{Stateless: stateless}))
			t.Cleanup(hs.Close)
			h := &httpRaw{t: t, url: hs.URL + streamable.MCPPath}
			meta := ""
			if stateless {
				h.header = map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "tairseach_demo_echo"}
				meta = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},`
			} else {
				h.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
				h.header = map[string]string{"Mcp-Protocol-Version": "2025-11-25"}
				h.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			}
			for _, id := range []string{`1.50`, `9007199254740993`} {
				lines := h.post(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"tairseach_demo_echo","arguments":` + arguments + `,"_meta":{` + meta + `"progressToken":` + id + `}}}`)
				if len(lines) == 0 {
					t.Fatalf("id %s: no answer", id)
				}
				last := lines[len(lines)-1]
				var resp struct {
					ID     json.RawMessage
					Result struct{ StructuredContent json.RawMessage }
				}
				if err := json.Unmarshal([]byte(last), &resp); err != nil || string(resp.ID) != id {
					t.Fatalf("id %s: the response (%v) is\n%s", id, err, last)
				}
				var got, want map[string]any
				_ = json.Unmarshal(resp.Result.StructuredContent, &got)
				_ = json.Unmarshal([]byte(arguments), &want)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("id %s: the result is not the arguments echoed:\n%s\nwant\n%s", id, last, arguments)
				}
			}
		})
	}
}
