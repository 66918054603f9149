package observe

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/socketrpc"
)

func TestOpenAuditRefuses(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.jsonl")
	if err := os.WriteFile(target, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	loose := filepath.Join(dir, "loose.jsonl")
	if err := os.WriteFile(loose, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(loose, 0o640); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{link, "symlink"},
		{loose, "mode 0640"},
		{dir, "opening the audit log"},
	} {
		if _, err := OpenAudit(tc.path, AuditOptions{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("OpenAudit(%s) = %v, want an error with %q", tc.path, err, tc.want)
		}
	}
	a, err := OpenAudit(filepath.Join(dir, "new.jsonl"), AuditOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	if fi, _ := os.Stat(filepath.Join(dir, "new.jsonl")); fi.Mode().Perm() != 0o600 {
		t.Errorf("a new log has mode %04o, want 0600", fi.Mode().Perm())
	}
}

func TestCanonicalJSON(t *testing.T) {
	for in, want := range map[string]string{
		`{ "b": 1.50, "a": {"d": [1, 2], "c": "<x>"} }`: `{"a":{"c":"<x>","d":[1,2]},"b":1.50}`,
		`{}`:       `{}`,
		`not json`: `not json`,
	} {
		if got := string(canonicalJSON(json.RawMessage(in))); got != want {
			t.Errorf("canonicalJSON(%s) = %s, want %s", in, got, want)
		}
	}
}

// An audit log path that is a FIFO is refused at once: opening it for
// writing must not wait for a reader and hold up the start.
func TestAuditRefusesFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := OpenAudit(path, AuditOptions{Logger: zerolog.Nop()})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("OpenAudit(FIFO) = %v; want a refusal naming it", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("OpenAudit blocked on a FIFO")
	}
}

// A write that fails is logged once, counted, and never fails the call.
func TestAuditWriteFailureDoesNotFailTheCall(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	var logs strings.Builder
	a, err := OpenAudit(path, AuditOptions{Logger: zerolog.New(&logs)})
	if err != nil {
		t.Fatal(err)
	}
	// Writes now fail: the file is closed under the log.
	_ = a.f.Close()
	ob := Observer{Audit: a}
	for range 3 {
		_, c := ob.Start(context.Background(), CallInfo{Transport: "stdio"}, "t", nil)
		ob.End(c, &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "{}"}}}, 1<<20)
	}
	if n := strings.Count(logs.String(), "audit log: writing failed"); n != 1 {
		t.Errorf("the failure was logged %d times, want once:\n%s", n, logs.String())
	}
	if a.Lost() != 3 {
		t.Errorf("Lost() = %d, want 3", a.Lost())
	}
}

// fullDisk writes the first room bytes it is given, then fails as a full
// disk does.
type fullDisk struct {
	*os.File
	room int
}

func (f *fullDisk) Write(b []byte) (int, error) {
	n := min(len(b), f.room)
	n, _ = f.File.Write(b[:n])
	f.room -= n
	if n < len(b) {
		return n, syscall.ENOSPC
	}
	return n, nil
}

// A record the disk has room for only part of is cut back: the file keeps
// whole records only, and the next record that fits starts a line.
func TestAuditPartialRecordCutBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := OpenAudit(path, AuditOptions{Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ob := Observer{Audit: a}
	record := func() {
		_, c := ob.Start(context.Background(), CallInfo{Transport: "stdio"}, "t", json.RawMessage(`{"a":1}`))
		ob.End(c, &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "{}"}}}, 1<<20)
	}
	record()
	a.f = &fullDisk{File: a.f.(*os.File), room: 40} // part of the next record fits
	record()
	a.f.(*fullDisk).room = 1 << 20 // room again
	record()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2 (the partial record cut back):\n%s", len(lines), b)
	}
	for _, l := range lines {
		var v map[string]any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Errorf("line %q does not parse: %v", l, err)
		}
	}
	if a.Lost() != 1 {
		t.Errorf("Lost() = %d, want 1", a.Lost())
	}
}

// Calls that end at once each return only when their line is in the file;
// every line is whole, and each caller's lines are in the order its calls
// ended.
func TestAuditGroupCommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := OpenAudit(path, AuditOptions{Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	ob := Observer{Audit: a}
	const callers, calls = 16, 150
	fromCallers(callers, calls, func(w, i int) {
		c := recordCall(ob, fmt.Sprintf("%d-%d", w, i))
		if i%25 == 0 { // the line is there when End returns
			if b, _ := os.ReadFile(path); !bytes.Contains(b, []byte(`"call_id":"`+c+`"`)) {
				t.Errorf("End of call %d-%d returned before its line was written", w, i)
			}
		}
	})
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	inCallersOrder(t, readLines(t, path), callers, calls)
}

// countingFile counts the writes made to the audit file.
type countingFile struct {
	*os.File
	writes *atomic.Int64
}

func (f countingFile) Write(b []byte) (int, error) {
	f.writes.Add(1)
	return f.File.Write(b)
}

// TestAuditDelayedWrites: with a Delay, as serve opens the log, a call's
// End does not wait for its line: the lines of calls that end within the
// delay share one write, made by the timer without Close, in each
// caller's order; Close writes what is waiting, and a record after Close
// is written before it returns.
func TestAuditDelayedWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := OpenAudit(path, AuditOptions{Delay: 20 * time.Millisecond, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	var writes atomic.Int64
	a.f = countingFile{a.f.(*os.File), &writes}
	ob := Observer{Audit: a}

	// One call: its line is written by the timer, with no Close.
	recordCall(ob, "first")
	deadline := time.Now().Add(10 * time.Second)
	for len(readLinesOrNone(t, path)) < 1 {
		if time.Now().After(deadline) {
			t.Fatal("the line of a call was not written within 10 s of its end, with a 20 ms delay")
		}
		time.Sleep(5 * time.Millisecond)
	}

	const callers, calls = 16, 150
	fromCallers(callers, calls, func(w, i int) { recordCall(ob, fmt.Sprintf("%d-%d", w, i)) })
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, path)
	inCallersOrder(t, lines[1:], callers, calls)
	// 2,400 calls in far less than a second, 20 ms a write at most: a
	// write per call would be 2,401.
	if n := writes.Load(); n > callers*calls/10 {
		t.Errorf("%d writes for %d lines: the lines of calls that end together are not written together", n, len(lines))
	}

	c := recordCall(ob, "after-close")
	if b, _ := os.ReadFile(path); !bytes.Contains(b, []byte(`"call_id":"`+c+`"`)) {
		t.Error("a call recorded after Close returned before its line was written")
	}
	_ = a.Close()
}

// slowDisk takes delay over each write.
type slowDisk struct {
	*os.File
	delay time.Duration
}

func (f slowDisk) Write(b []byte) (int, error) {
	time.Sleep(f.delay)
	return f.File.Write(b)
}

// TestAuditSlowDisk: with a disk slower than the calls (30 ms a write),
// the calls waiting reach their bound and the next wait for the write:
// every line is whole, once, in each caller's order (the buffer a write
// takes is not the one the next lines go into).
func TestAuditSlowDisk(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := OpenAudit(path, AuditOptions{Delay: time.Millisecond, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	a.f = slowDisk{a.f.(*os.File), 30 * time.Millisecond}
	ob := Observer{Audit: a}
	const callers, calls = 8, 3000
	fromCallers(callers, calls, func(w, i int) { recordCall(ob, fmt.Sprintf("%d-%d", w, i)) })
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	inCallersOrder(t, readLines(t, path), callers, calls)
}

// gatedDisk holds each write until the test opens the gate.
type gatedDisk struct {
	*os.File
	entered chan struct{}
	gate    chan struct{}
}

func (f gatedDisk) Write(b []byte) (int, error) {
	f.entered <- struct{}{}
	<-f.gate
	return f.File.Write(b)
}

// TestAuditTimerWaitsOnce: calls that end, one by one, while a write
// hangs, leave their lines to the one timer run waiting for that write;
// none starts another goroutine to wait beside it.
func TestAuditTimerWaitsOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := OpenAudit(path, AuditOptions{Delay: time.Millisecond, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	disk := gatedDisk{a.f.(*os.File), make(chan struct{}, 100), make(chan struct{})}
	a.f = disk
	ob := Observer{Audit: a}
	end := func(c *Call) {
		ob.End(c, &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "{}"}}}, 1<<20)
	}
	start := func() *Call {
		_, c := ob.Start(context.Background(), CallInfo{Transport: "stdio"}, "t", nil)
		return c
	}
	held := start()
	end(start())
	<-disk.entered // the timer's write of it hangs
	before := runtime.NumGoroutine()
	for range 40 {
		end(start())
		time.Sleep(3 * time.Millisecond) // past the delay: the timer is due again
	}
	if extra := runtime.NumGoroutine() - before; extra > 3 {
		t.Errorf("%d goroutines more after 40 calls ended during one hanging write: each call started one to wait for it", extra)
	}
	close(disk.gate)
	end(held)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(readLines(t, path)); n != 42 {
		t.Errorf("%d lines, want 42", n)
	}
}

// recordCall makes one call of tool t that ends ok, with request id id
// (a JSON string), as the call pipeline records it, and returns its
// call_id (the Call is observe's once ended).
func recordCall(ob Observer, id string) string {
	_, c := ob.Start(context.Background(), CallInfo{Transport: "stdio", RequestID: strconv.Quote(id)}, "t", json.RawMessage(`{"b":1,"a":[2]}`))
	callID := c.ID()
	ob.End(c, &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "{}"}}}, 1<<20)
	return callID
}

// fromCallers runs call(w, i) for calls calls from each of callers
// goroutines at once, and returns when all have.
func fromCallers(callers, calls int, call func(w, i int)) {
	var wg sync.WaitGroup
	for w := range callers {
		wg.Go(func() {
			for i := range calls {
				call(w, i)
			}
		})
	}
	wg.Wait()
}

// inCallersOrder checks that lines are one per call of callers callers
// of calls calls each, whose request ids are "caller-call", in each
// caller's order.
func inCallersOrder(t *testing.T, lines []lineRecord, callers, calls int) {
	t.Helper()
	if len(lines) != callers*calls {
		t.Fatalf("%d lines, want %d", len(lines), callers*calls)
	}
	next := make([]int, callers)
	for _, l := range lines {
		var w, i int
		if _, err := fmt.Sscanf(strings.Trim(string(l.RequestID), `"`), "%d-%d", &w, &i); err != nil {
			t.Fatalf("request_id %q: %v", l.RequestID, err)
		}
		if i != next[w] {
			t.Fatalf("caller %d: line of call %d, want %d (out of order)", w, i, next[w])
		}
		next[w]++
	}
}

// TestAuditBatchKeepsOthersLines: a call whose line cannot be made (a
// request id that is not JSON) is logged and left out of its write; the
// lines made before and after it in the same write are kept.
func TestAuditBatchKeepsOthersLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	var logs strings.Builder
	a, err := OpenAudit(path, AuditOptions{Delay: time.Hour, Logger: zerolog.New(&logs)})
	if err != nil {
		t.Fatal(err)
	}
	ob := Observer{Audit: a}
	for _, id := range []string{`"a"`, `"bad`, `{bad`, `"c"`} {
		_, c := ob.Start(context.Background(), CallInfo{Transport: "stdio", RequestID: id}, "t", json.RawMessage(`{}`))
		ob.End(c, &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "{}"}}}, 1<<20)
	}
	if err := a.Close(); err != nil { // one write, of all four
		t.Fatal(err)
	}
	var got []string
	for _, l := range readLines(t, path) {
		got = append(got, string(l.RequestID))
	}
	if want := []string{`"a"`, `"c"`}; !slices.Equal(got, want) {
		t.Errorf("request ids %q in the log, want %q", got, want)
	}
	if n := strings.Count(logs.String(), "audit log: encoding the record"); n != 2 {
		t.Errorf("%d records logged as not encoded, want 2:\n%s", n, logs.String())
	}
}

// readLinesOrNone is readLines of a log that may not exist yet.
func readLinesOrNone(t *testing.T, path string) []lineRecord {
	if b, err := os.ReadFile(path); err != nil || len(b) == 0 {
		return nil
	}
	return readLines(t, path)
}

type lineRecord struct {
	RequestID json.RawMessage `json:"request_id"`
	CallID    string          `json:"call_id"`
	TraceID   string          `json:"trace_id"`
	Tool      string
}

// readLines parses every line of an audit log: each must be whole JSON.
func readLines(t *testing.T, path string) []lineRecord {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []lineRecord
	for i, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		var r lineRecord
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("line %d %q: %v", i+1, l, err)
		}
		out = append(out, r)
	}
	return out
}

// The lines of a write are laid out so that none crosses a multiple of
// the page size but one that starts a write and is longer than what is
// left (and than the longest line before it); with their padding taken
// away they are the lines as written.
func TestAuditLayout(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		r := rand.New(rand.NewPCG(seed, seed))
		a := &Audit{endsNL: true, size: int64(r.IntN(pageSize))}
		var file, want []byte // what is written after the file's a.size bytes
		for range 400 {
			var lines []byte
			for range 1 + r.IntN(12) {
				n := 200 + r.IntN(500)
				if r.IntN(50) == 0 {
					n = 3000 + r.IntN(3000) // a long one, now and then
				}
				lines = append(append(lines, bytes.Repeat([]byte{'a'}, n-1)...), '\n')
			}
			longest := a.longest
			start := a.size
			out := a.layout(nil, lines)
			a.size += int64(len(out))
			want = append(want, lines...)
			for pos, rest := start, out; len(rest) > 0; {
				i := bytes.IndexByte(rest, '\n')
				line := rest[:i+1]
				first := pos == start
				if n := int64(len(line)); n <= pageSize && pos/pageSize != (pos+n-1)/pageSize &&
					(!first || n <= int64(min(longest, maxEndPad))) {
					t.Fatalf("seed %d: a line of %d bytes at %d crosses %d", seed, n, pos, (pos/pageSize+1)*pageSize)
				}
				pos += int64(len(line))
				rest = rest[i+1:]
			}
			file = append(file, out...)
		}
		if got := regexp.MustCompile(` +\n`).ReplaceAll(file, []byte("\n")); !bytes.Equal(got, want) {
			t.Fatalf("seed %d: the lines, their padding taken away, are not the lines written", seed)
		}
	}
}

// A line an earlier process left cut short is ended with a newline before
// the next line, which is whole.
func TestAuditEndsTornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	if err := os.WriteFile(path, []byte("{\"a\":1}\n{\"b\":"), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	a, err := OpenAudit(path, AuditOptions{Logger: zerolog.New(&logs)})
	if err != nil {
		t.Fatal(err)
	}
	ob := Observer{Audit: a}
	_, c := ob.Start(context.Background(), CallInfo{Transport: "stdio"}, "t", nil)
	ob.End(c, &mcp.CallToolResult{}, 1<<20)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 3 || lines[1] != `{"b":` || !json.Valid([]byte(lines[2])) || a.Lost() != 0 {
		t.Fatalf("after a torn line: %q (lost %d); want it ended, then a whole line", lines, a.Lost())
	}
	if !strings.Contains(logs.String(), "cut short") {
		t.Errorf("the torn line was not reported: %s", logs.String())
	}
}

// syncCounter counts the syncs of the file under an audit log.
type syncCounter struct {
	*os.File
	syncs atomic.Int32
}

func (s *syncCounter) Sync() error {
	s.syncs.Add(1)
	return s.File.Sync()
}

// With Sync, the file is synced before a call returns; calls that end at
// once share the sync.
func TestAuditSync(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := OpenAudit(path, AuditOptions{Sync: true, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	sc := &syncCounter{File: a.f.(*os.File)}
	a.f = sc
	ob := Observer{Audit: a}
	record := func() {
		_, c := ob.Start(context.Background(), CallInfo{Transport: "stdio"}, "t", nil)
		ob.End(c, &mcp.CallToolResult{}, 1<<20)
	}
	record()
	if n := sc.syncs.Load(); n != 1 {
		t.Fatalf("%d syncs after one call, want 1", n)
	}
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(record)
	}
	wg.Wait()
	if n := sc.syncs.Load(); n < 2 || n > 33 {
		t.Fatalf("%d syncs for 33 calls", n)
	}
	t.Logf("%d syncs for 33 calls", sc.syncs.Load())
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(readLines(t, path)); n != 33 {
		t.Fatalf("%d lines, want 33", n)
	}
}

// TestAuditCallsDoNotCarryOver checks that a Call made again from one
// ended before it (calls, the pool) says nothing of that call: after a
// call with every field set, plain calls' lines have their own arguments
// and none of its session, client, code, target or arguments. It is
// made with the log's Delay (the lines made by the timer's write, from
// calls freed as it makes them) and without (each made by its caller).
func TestAuditCallsDoNotCarryOver(t *testing.T) {
	for _, delay := range []time.Duration{0, time.Millisecond} {
		t.Run(fmt.Sprint(delay), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			a, err := OpenAudit(path, AuditOptions{Args: true, Delay: delay, Logger: zerolog.Nop()})
			if err != nil {
				t.Fatal(err)
			}
			ob := Observer{Audit: a}
			for i := range 50 {
				if i%10 == 0 {
					args := []byte(`{"secret":"first"}`)
					full := CallInfo{Transport: "http", Kind: "resource", Session: "S-first", Client: &mcp.Implementation{Name: "first-client", Version: "1"},
						Protocol: "2025-11-25", RequestID: `"first"`, Meta: map[string]any{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}
					_, c := ob.Start(context.Background(), full, "tairseach://first/1", args)
					_, _ = c.Forward(context.Background(), "first.method", "/first.sock", func(context.Context) (json.RawMessage, error) {
						return nil, &socketrpc.Error{Code: -32001, Message: "no", Raw: json.RawMessage(`{"code":-32001,"message":"no"}`)}
					})
					ob.End(c, &mcp.CallToolResult{IsError: true}, 1<<20)
					copy(args, `{"secret":"reuse"}`) // the transport's buffer, read into again
					continue
				}
				_, c := ob.Start(context.Background(), CallInfo{Transport: "stdio", RequestID: strconv.Itoa(i)}, "t", json.RawMessage(`{"n":`+strconv.Itoa(i)+`}`))
				ob.End(c, &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "{}"}}}, 1<<20)
				if i%10 == 5 {
					time.Sleep(3 * delay) // let the timer's write free what it holds
				}
			}
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(path)
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			if len(lines) != 50 {
				t.Fatalf("%d lines, want 50:\n%s", len(lines), b)
			}
			for i, l := range lines {
				var rec map[string]any
				if err := json.Unmarshal([]byte(l), &rec); err != nil {
					t.Fatalf("line %d: %v", i+1, err)
				}
				if i%10 == 0 {
					if rec["session"] != "S-first" || rec["code"] != -32001.0 || rec["args"] == nil || rec["args"].(map[string]any)["secret"] != "first" {
						t.Errorf("line %d, of the full call, is %s", i+1, l)
					}
					continue
				}
				want := map[string]any{"n": float64(i)}
				for _, k := range []string{"session", "client", "code", "target", "method", "socket", "trace_id"} {
					if _, ok := rec[k]; ok {
						t.Errorf("line %d, of a plain call, has %q: %s", i+1, k, l)
					}
				}
				if fmt.Sprint(rec["args"]) != fmt.Sprint(want) || rec["transport"] != "stdio" || rec["kind"] != "tool" || rec["outcome"] != "ok" {
					t.Errorf("line %d, of a plain call, is %s", i+1, l)
				}
			}
		})
	}
}
