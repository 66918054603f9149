package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

func auditLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

func TestAuditRotatesBySize(t *testing.T) {
	sock := startDemo(t)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := OpenAudit(path, AuditOptions{MaxBytes: 1200, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	srv := New(Config{DefaultSocket: sock, Audit: a, Logger: zerolog.Nop()}, loadExample(t))
	defer srv.Close()
	const calls = 12
	for i := range calls {
		if res := srv.Call(context.Background(), "tairseach_demo_echo", json.RawMessage(`{"i":`+string(rune('0'+i%10))+`}`)); res.IsError {
			t.Fatal(firstText(res))
		}
	}
	cur, old := auditLines(t, path), auditLines(t, path+".1")
	if len(cur) == 0 || len(old) == 0 || len(cur)+len(old) > calls {
		t.Fatalf("%d lines in the log and %d in .1 after %d calls; want both non-empty, at most %d in all", len(cur), len(old), calls, calls)
	}
	for _, p := range []string{path, path + ".1"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > 1200 {
			t.Errorf("%s: %d bytes, over --audit-max-bytes", p, fi.Size())
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %04o", p, fi.Mode().Perm())
		}
	}
	if last := cur[len(cur)-1]; last["outcome"] != "ok" || last["method"] != "demo.echo" || last["transport"] != "cli" {
		t.Errorf("last line %v", last)
	}
}

func TestAuditWriteFailureDoesNotFailTheCall(t *testing.T) {
	sock := startDemo(t)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	logs := &lockedBuffer{}
	a, err := OpenAudit(path, AuditOptions{Logger: zerolog.New(logs)})
	if err != nil {
		t.Fatal(err)
	}
	srv := New(Config{DefaultSocket: sock, Audit: a, Logger: zerolog.Nop()}, loadExample(t))
	defer srv.Close()
	// Writes now fail: the file is closed under the log.
	_ = a.f.Close()
	for range 3 {
		if res := srv.Call(context.Background(), "tairseach_server_status", nil); res == nil || res.IsError {
			t.Fatalf("the call failed with the audit log: %v", res)
		}
	}
	if n := strings.Count(logs.String(), "audit log: writing failed"); n != 1 {
		t.Errorf("the failure was logged %d times, want once:\n%s", n, logs.String())
	}
}

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

func TestParseConfirm(t *testing.T) {
	for _, tc := range []struct {
		in      []string
		want    string
		wantErr string
	}{
		{[]string{"none"}, "", ""},
		{nil, "", ""},
		{[]string{"destructive"}, "destructive", ""},
		{[]string{"destructive, contacts.*", "mail.send"}, "destructive,contacts.*,mail.send", ""},
		{[]string{"none", "destructive"}, "", "cannot be combined"},
		{[]string{"contacts.["}, "", "not a valid glob"},
	} {
		got, err := ParseConfirm(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseConfirm(%q) = %v, want an error with %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || strings.Join(got, ",") != tc.want {
			t.Errorf("ParseConfirm(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
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
