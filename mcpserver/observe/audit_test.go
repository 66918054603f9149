package observe

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
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
