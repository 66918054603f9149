package mcpserver

// Fuzz tests of the two parsers of untrusted input in this package: the
// stdio line reader (FuzzStdioLines) and the check of tool arguments against
// a manifest's inputSchema (FuzzCheckArgs). Seeds live in testdata/stdio and
// testdata/checkargs; crashers that go test -fuzz finds are kept under
// testdata/fuzz and rerun by every go test.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/internal/faultbackend"
	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver/shutdown"
	"github.com/geilt/tairseach-mcp/mcpserver/stdio"
)

// fuzzDrain bounds how long a fuzzed session waits for its requests after
// end of input; fuzzEnd is how long it may take to end in all.
const (
	fuzzDrain = 2 * time.Second
	fuzzEnd   = 10 * time.Second
)

// lockedBuffer is a bytes.Buffer written by the session's goroutines and
// read by the test.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// fuzzServer is a Server with one tool, tairseach_echo, whose calls a fault
// backend answers with their arguments. It lives as long as the fuzz
// process: building it per input would measure little but its set-up.
func fuzzServer(f *testing.F) *Server {
	f.Helper()
	dir, err := os.MkdirTemp("", "fuzz")
	if err != nil {
		f.Fatal(err)
	}
	sock := filepath.Join(dir, "s.sock")
	be, err := faultbackend.Start(sock, faultbackend.Options{})
	if err != nil {
		f.Fatal(err)
	}
	srv := New(Config{DefaultSocket: sock, CallTimeout: time.Second, Logger: zerolog.Nop()}, registryOfTB(f, `{"id":"t","tools":[
		{"name":"echo","description":"Echo.","inputSchema":{"type":"object","properties":{"n":{"type":"integer"},"s":{"type":"string"}}}}],
		"implementation":{"methods":{"echo":"fault.ok"}}}`))
	f.Cleanup(func() { srv.Close(); be.Stop(); os.RemoveAll(dir) })
	return srv
}

func registryOfTB(tb testing.TB, manifestJSON string) *manifest.Registry {
	tb.Helper()
	file, err := manifest.ParseFile("test.json", []byte(manifestJSON), manifest.Options{Prefix: "tairseach_"})
	if err != nil {
		tb.Fatal(err)
	}
	return manifest.Build([]*manifest.File{file})
}

// addSeeds adds every file of testdata/dir to f's corpus, via add.
func addSeeds(f *testing.F, dir string, add func(data []byte)) {
	f.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", dir, "*"))
	if err != nil || len(paths) == 0 {
		f.Fatalf("no seeds in testdata/%s: %v", dir, err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		add(data)
	}
}

// FuzzStdioLines feeds arbitrary input to one stdio session and checks what
// comes out: every line is one JSON-RPC 2.0 message, no request is answered
// more often than it was sent, and the session ends soon after end of input.
func FuzzStdioLines(f *testing.F) {
	srv := fuzzServer(f)
	addSeeds(f, "stdio", func(data []byte) { f.Add(data) })
	f.Fuzz(func(t *testing.T, input []byte) {
		out := &lockedBuffer{}
		tr := &stdio.Transport{In: bytes.NewReader(input), Out: out, End: shutdown.New(shutdown.Config{Drain: fuzzDrain}), MaxLineBytes: 1 << 20, Logger: zerolog.Nop()}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		start := time.Now()
		go func() { done <- srv.ServeStdio(ctx, tr) }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("session failed: %v", err)
			}
		case <-time.After(fuzzEnd):
			cancel()
			t.Fatalf("session still running %v after end of input\ninput: %q\noutput so far:\n%s", fuzzEnd, input, out.String())
		}
		took := time.Since(start)
		checkStdioOutput(t, input, out.String())
		if took >= fuzzDrain {
			t.Fatalf("a request was left unanswered until the drain timeout (%v)\ninput: %q\noutput:\n%s", took, input, out.String())
		}
	})
}

// checkStdioOutput checks the invariants of a session's output.
func checkStdioOutput(t *testing.T, input []byte, output string) {
	t.Helper()
	sent := requestIDs(input)
	answered := map[string]int{}
	for line := range strings.Lines(output) {
		line = strings.TrimSuffix(line, "\n")
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("output line is not a JSON object: %v\nline: %q\ninput: %q", err, line, input)
		}
		if string(m["jsonrpc"]) != `"2.0"` {
			t.Fatalf(`output line has no "jsonrpc":"2.0": %q`, line)
		}
		_, isCall := m["method"]
		_, hasResult := m["result"]
		_, hasError := m["error"]
		if isCall {
			continue // a notification or request of the server's
		}
		if hasResult == hasError {
			t.Fatalf("response has neither or both of result and error: %q", line)
		}
		id, ok := m["id"]
		if !ok {
			t.Fatalf("response has no id: %q", line)
		}
		key, ok := idKey(id)
		if !ok {
			continue // an error about a line whose id could not be read
		}
		answered[key]++
		if answered[key] > sent[key] {
			t.Fatalf("request id %s answered %d times, sent %d times\ninput: %q\noutput:\n%s", key, answered[key], sent[key], input, output)
		}
	}
}

// requestIDs counts, for each id, the input lines that might carry it: any
// top-level member named "id" in any letter case (the decoders involved
// differ on case and duplicates), counted once per line.
func requestIDs(input []byte) map[string]int {
	n := map[string]int{}
	for line := range bytes.Lines(input) {
		line = bytes.TrimSpace(line)
		dec := json.NewDecoder(bytes.NewReader(line))
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			continue
		}
		keys := map[string]bool{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				break
			}
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				break
			}
			if name, _ := tok.(string); strings.EqualFold(name, "id") {
				if k, ok := idKey(v); ok {
					keys[k] = true
				}
			}
		}
		for k := range keys {
			n[k]++
		}
	}
	return n
}

// idKey is a JSON-RPC id as the go-sdk sees it: a string, or a number
// truncated to int64. A number that does not fit a float64 keeps its text, as
// only the transport's own error responses echo it.
func idKey(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", false
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return "s:" + s, true
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		v, err := strconv.ParseFloat(string(raw), 64)
		if err != nil || math.IsInf(v, 0) {
			return "r:" + string(raw), true
		}
		return fmt.Sprintf("n:%d", int64(v)), true
	}
	return "", false
}

// TestFuzzHelpers checks the test's own id bookkeeping.
func TestFuzzHelpers(t *testing.T) {
	for _, tt := range []struct {
		raw  string
		want string
		ok   bool
	}{
		{`1`, "n:1", true}, {`1.9`, "n:1", true}, {`-0`, "n:0", true}, {`1e3`, "n:1000", true},
		{`"a"`, "s:a", true}, {`"\u0061"`, "s:a", true}, {`1e400`, "r:1e400", true},
		{`null`, "", false}, {`{}`, "", false}, {``, "", false},
	} {
		got, ok := idKey(json.RawMessage(tt.raw))
		if got != tt.want || ok != tt.ok {
			t.Errorf("idKey(%s) = %q, %v; want %q, %v", tt.raw, got, ok, tt.want, tt.ok)
		}
	}
	ids := requestIDs([]byte("{\"id\":1,\"ID\":1}\n{\"Id\":\"x\",\"id\":2}\nnot json\n[{\"id\":3}]\n"))
	want := map[string]int{"n:1": 1, "s:x": 1, "n:2": 1}
	if fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Errorf("requestIDs = %v, want %v", ids, want)
	}
}
