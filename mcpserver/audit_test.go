package mcpserver

import (
	"context"
	"encoding/json"
	"github.com/geilt/tairseach-mcp/mcpserver/policy"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/mcpserver/check"
	"github.com/geilt/tairseach-mcp/mcpserver/observe"
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
	a, err := observe.OpenAudit(path, observe.AuditOptions{MaxBytes: 1200, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	srv := New(Config{DefaultSocket: sock, Audit: a, Logger: zerolog.Nop()}, loadExample(t))
	defer srv.Close()
	const calls = 12
	for i := range calls {
		if res := srv.Call(context.Background(), "tairseach_demo_echo", json.RawMessage(`{"i":`+string(rune('0'+i%10))+`}`)); res.IsError {
			t.Fatal(check.ResultText(res))
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
		got, err := policy.ParseConfirm(tc.in)
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
