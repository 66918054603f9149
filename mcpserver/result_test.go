package mcpserver

// Tests of what a tool call sends back: the size of the message
// (--max-result-bytes), UTF-8, and the outputSchema policies.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/mcpserver/check"
	"github.com/geilt/tairseach-mcp/mcpserver/pipeline"
	"github.com/geilt/tairseach-mcp/mcpserver/stdio"
	"github.com/geilt/tairseach-mcp/mcpserver/streamable"
)

// rawSession is a stdio session of srv driven line by line, as a client's
// bytes; lines are what the server wrote, unparsed.
type rawSession struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan string
}

func startRawSession(t *testing.T, srv *Server) *rawSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.ServeStdio(ctx, &stdio.Transport{In: inR, Out: outW, Logger: zerolog.Nop()})
		outW.Close()
	}()
	s := &rawSession{t: t, in: inW, lines: make(chan string, 16)}
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
		_, _ = io.Copy(io.Discard, outR)
	}()
	t.Cleanup(func() { cancel(); inW.Close(); <-done })
	s.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	s.next()
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s
}

func (s *rawSession) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
}

func (s *rawSession) next() string {
	s.t.Helper()
	select {
	case l, ok := <-s.lines:
		if !ok {
			s.t.Fatal("the session ended")
		}
		return l
	case <-time.After(30 * time.Second):
		s.t.Fatal("no line within 30s")
	}
	return ""
}

// call sends tools/call with id 1 and returns the response line and its
// decoded result.
func (s *rawSession) call(tool string, args string) (line string, isError bool, text string) {
	s.t.Helper()
	s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, tool, args))
	line = s.next()
	isError, text = decodeCall(s.t, line)
	return line, isError, text
}

// caller makes tools/call requests with id 1 and returns the whole message
// each response came in, and its decoded result.
type caller func(tool, args string) (msg string, isError bool, text string)

// httpCaller calls through srv's HTTP handler (the go-sdk's encoding of
// results), stateless, returning the JSON-RPC message of the event stream.
func httpCaller(t *testing.T, srv *Server) caller {
	ts := httptest.NewServer(srv.NewHTTPHandler(streamable.Config{Stateless: true}))
	t.Cleanup(ts.Close)
	return func(tool, args string) (string, bool, string) {
		t.Helper()
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, tool, args)
		req, _ := http.NewRequest("POST", ts.URL+streamable.MCPPath, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		msg := string(b)
		for _, line := range strings.Split(msg, "\n") {
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				msg = data
			}
		}
		isError, text := decodeCall(t, msg)
		return msg, isError, text
	}
}

// decodeCall decodes a tools/call response.
func decodeCall(t *testing.T, msg string) (bool, string) {
	t.Helper()
	var m struct {
		Result struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(msg), &m); err != nil || len(m.Result.Content) != 1 {
		t.Fatalf("response %.300s: %v", msg, err)
	}
	return m.Result.IsError, m.Result.Content[0].Text
}

// TestMessageSizeLimitBoundary checks that --max-result-bytes bounds the
// message the client reads, on the stdio path that serves calls directly
// and on the go-sdk's (HTTP), with and without structuredContent (which
// doubles it) and for text that escaping makes six times longer: the
// largest result that fits is sent, in a message no larger than the limit,
// and one byte more is an isError naming the message's size and the limit.
func TestMessageSizeLimitBoundary(t *testing.T) {
	const limit = 100_000
	sock := startDemo(t)
	for _, transport := range []string{"stdio", "http"} {
		for _, tt := range []struct {
			name   string
			strict bool
			tool   string
			args   func(n int) string // a result of about n bytes and more
		}{
			{"text", false, "tairseach_demo_blob", func(n int) string { return fmt.Sprintf(`{"bytes":%d}`, n) }},
			{"text and structuredContent", true, "tairseach_demo_blob", func(n int) string { return fmt.Sprintf(`{"bytes":%d}`, n) }},
			{"escaped text", false, "tairseach_demo_echo", func(n int) string { return `{"s":"` + strings.Repeat("<", n) + `"}` }},
			{"escaped text and structuredContent", true, "tairseach_demo_echo", func(n int) string { return `{"s":"` + strings.Repeat("<", n) + `"}` }},
		} {
			t.Run(transport+"/"+tt.name, func(t *testing.T) {
				srv := New(Config{DefaultSocket: sock, MaxResultBytes: limit, OutputSchemas: tt.strict, ResultBudget: -1, Logger: zerolog.Nop()}, loadExample(t))
				defer srv.Close()
				call := httpCaller(t, srv)
				if transport == "stdio" {
					call = startRawSession(t, srv).call
				}
				// The message grows linearly with n: find the n that fills it.
				size := func(n int) (int, bool, string) {
					msg, isErr, text := call(tt.tool, tt.args(n))
					return len(msg), isErr, text
				}
				m1, _, _ := size(1000)
				m2, _, _ := size(2000)
				slope := (m2 - m1) / 1000
				envelope := len(`{"jsonrpc":"2.0","id":1,"result":}`)
				fill := 1000 + (limit-pipeline.EnvelopeReserve+envelope-m1)/slope
				m, isErr, text := size(fill)
				if isErr || m > limit || m < limit-pipeline.EnvelopeReserve-slope {
					t.Fatalf("the largest result that fits: isError %v, a message of %d bytes (limit %d): %.200s", isErr, m, limit, text)
				}
				m, isErr, text = size(fill + 1)
				if !isErr || !strings.Contains(text, "result too large") || !strings.Contains(text, fmt.Sprintf("over the limit of %d (--max-result-bytes)", limit)) || !strings.Contains(text, "narrow the request") {
					t.Fatalf("one byte more: isError %v: %.300s", isErr, text)
				}
				var reported int
				if _, err := fmt.Sscanf(text[strings.Index(text, "would make a message of "):], "would make a message of %d bytes", &reported); err != nil || reported <= limit || reported > limit+2*slope {
					t.Fatalf("reported size %d (%v), want just over %d: %s", reported, err, limit, text)
				}
				if m > 1000 {
					t.Fatalf("the isError message is %d bytes", m)
				}
				// The session goes on.
				if _, isErr, text := call("tairseach_server_status", `{}`); isErr {
					t.Fatalf("next call: %s", text)
				}
			})
		}
	}
}

// TestResultsAreValidUTF8 checks that bytes that are not UTF-8 in a result,
// in its strings and its keys, reach the client as U+FFFD, in the text and in
// structuredContent, on stdio and HTTP, so that a strict UTF-8 reader can
// read the stream.
func TestResultsAreValidUTF8(t *testing.T) {
	sock := startDemo(t)
	for _, transport := range []string{"stdio", "http"} {
		for _, strict := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/strict=%v", transport, strict), func(t *testing.T) {
				srv := New(Config{DefaultSocket: sock, OutputSchemas: strict, Logger: zerolog.Nop()}, loadExample(t))
				defer srv.Close()
				call := httpCaller(t, srv)
				if transport == "stdio" {
					call = startRawSession(t, srv).call
				}
				// demo.echo returns its params as they are, bytes included.
				line, isErr, text := call("tairseach_demo_echo", "{\"k\xff\":\"v\xfe\xc3\",\"ok\":\"é\"}")
				if isErr {
					t.Fatalf("isError: %s", text)
				}
				if !utf8.ValidString(line) {
					t.Fatalf("the response is not UTF-8: %q", line)
				}
				if want := "{\"k\uFFFD\":\"v\uFFFD\uFFFD\",\"ok\":\"é\"}"; text != want {
					t.Fatalf("text %q, want %q", text, want)
				}
				if strict && !strings.Contains(line, "\"structuredContent\":{\"k\uFFFD\":\"v\uFFFD\uFFFD\"") {
					t.Fatalf("structuredContent: %q", line)
				}
			})
		}
	}
}

// TestMismatchWarningQuotesNoValue checks that the warning logged for a
// result that does not match its (unadvertised) outputSchema says where and
// how, once per tool, but quotes no value of the result: results may hold
// secrets, and logs are kept where results are not.
func TestMismatchWarningQuotesNoValue(t *testing.T) {
	var logs lockedBuffer
	srv := New(Config{DefaultSocket: startDemo(t), CheckOutputs: true, Logger: zerolog.New(&logs)}, registryOf(t, `{"id":"t","tools":[
		{"name":"shallow","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"pw":{"type":"integer"}}}},
		{"name":"nested","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"items":{"type":"array","items":{"type":"object","properties":{"pw":{"type":"integer"}}}}}}},
		{"name":"full","inputSchema":{"type":"object"},"outputSchema":{"$ref":"#/$defs/r","$defs":{"r":{"type":"object","properties":{"pw":{"type":"integer"}}}}}}],
		"implementation":{"methods":{"shallow":"demo.echo","nested":"demo.echo","full":"demo.echo"}}}`))
	defer srv.Close()
	for _, tt := range []struct{ tool, args, want string }{
		{"tairseach_shallow", `{"pw":"hunter2"}`, `property \"pw\": type: a string is not integer`},
		{"tairseach_nested", `{"items":[{"pw":"hunter2"}]}`, `property \"items\": /items/properties/pw: type`},
		{"tairseach_full", `{"pw":"hunter2"}`, `/$defs/r/properties/pw: type`},
	} {
		for range 3 {
			res := srv.Call(context.Background(), tt.tool, json.RawMessage(tt.args))
			if res.IsError || textOf(res) != tt.args {
				t.Fatalf("%s: isError %v, %s; want the result as it is", tt.tool, res.IsError, textOf(res))
			}
		}
		// The check runs in the background.
		for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs.String(), `"level":"warn","tool":"`+tt.tool+`"`) && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		out := logs.String()
		if n := strings.Count(out, `"level":"warn","tool":"`+tt.tool+`"`); n != 1 || !strings.Contains(out, tt.want) {
			t.Errorf("%s: %d warnings, want 1 with %s:\n%s", tt.tool, n, tt.want, out)
		}
	}
	if strings.Contains(logs.String(), "hunter2") {
		t.Errorf("the log quotes the result:\n%s", logs.String())
	}
}

// TestExcerptCutsBetweenCharacters checks that a result quoted in an error
// message is cut between characters, not inside one, which would show as
// U+FFFD.
func TestExcerptCutsBetweenCharacters(t *testing.T) {
	for _, s := range []string{strings.Repeat("é", 1500), "a" + strings.Repeat("日", 1000), strings.Repeat("x", 1999) + "☘☘"} {
		got := check.Excerpt([]byte(s))
		if !utf8.ValidString(got) || strings.ContainsRune(got, utf8.RuneError) || !strings.Contains(got, fmt.Sprintf("(%d bytes in all)", len(s))) {
			t.Errorf("excerpt of %d bytes: %q", len(s), got[len(got)-40:])
		}
	}
}

// TestCheckerStopsOnClose checks that Close stops the goroutine checking
// results in the background, after the checks already queued (their
// warnings are logged), and can be called again. The checker's own stop
// is tested in the pipeline package.
func TestCheckerStopsOnClose(t *testing.T) {
	before := checkers()
	var logs lockedBuffer
	srv := New(Config{DefaultSocket: startDemo(t), CheckOutputs: true, Logger: zerolog.New(&logs)}, registryOf(t, `{"id":"t","tools":[
		{"name":"t","inputSchema":{"type":"object"},"outputSchema":{"type":"object","required":["x"]}}],
		"implementation":{"methods":{"t":"demo.echo"}}}`))
	if res := srv.Call(context.Background(), "tairseach_t", json.RawMessage(`{}`)); res.IsError {
		t.Fatal(textOf(res))
	}
	srv.Close()
	if !strings.Contains(logs.String(), `required: missing properties: [\"x\"]`) {
		t.Errorf("the check queued before Close was not run:\n%s", logs.String())
	}
	// Close waited for the goroutine's end: at most its return is left.
	for deadline := time.Now().Add(time.Second); checkers() > before; {
		if time.Now().After(deadline) {
			t.Fatal("the checker still runs after Close")
		}
		time.Sleep(time.Millisecond)
	}
	srv.Close()
}

// checkers counts the goroutines of pipelines' checkers of results
// running: another test's server may hold one.
func checkers() int {
	buf := make([]byte, 1<<20)
	return strings.Count(string(buf[:runtime.Stack(buf, true)]), "pipeline.(*checker).loop")
}
