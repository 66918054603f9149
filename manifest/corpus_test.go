package manifest

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// corpusDir holds the real Tairseach manifests (see its NOTICE.md); the
// tests of the other packages, the fuzzers and scripts/bench use it too.
var corpusDir = filepath.Join("testdata", "tairseach-manifests")

func loadCorpus(t testing.TB) *Registry {
	t.Helper()
	if _, err := os.Stat(corpusDir); err != nil {
		t.Fatalf("manifest corpus not found at %s: %v", corpusDir, err)
	}
	r, err := Load(corpusDir, Options{Prefix: "tairseach_", Logger: zerolog.Nop()})
	if err != nil {
		t.Fatalf("Load(%s): %v", corpusDir, err)
	}
	return r
}

func TestCorpus(t *testing.T) {
	r := loadCorpus(t)

	if len(r.Files) != 23 {
		t.Errorf("loaded %d files, want 23", len(r.Files))
	}
	if len(r.FileErrors) != 0 {
		t.Errorf("FileErrors = %v, want none", r.FileErrors)
	}
	if len(r.Tools) != 91 {
		t.Errorf("got %d tools, want 91", len(r.Tools))
	}

	counts := map[SkipReason]int{}
	for _, s := range r.Skipped {
		counts[s.Reason]++
	}
	want := map[SkipReason]int{Hidden: 7, NoMethod: 1, Duplicate: 15}
	for reason, n := range want {
		if counts[reason] != n {
			t.Errorf("%d skipped as %v, want %d", counts[reason], reason, n)
		}
	}
	if counts[Conflict] != 0 || counts[BadSchema] != 0 {
		t.Errorf("skipped counts = %v, want no conflicts or bad schemas", counts)
	}
	// 114 tools in all: exposed + skipped.
	if n := len(r.Tools) + len(r.Skipped); n != 114 {
		t.Errorf("%d tools exposed or skipped, want 114", n)
	}

	mappings := []struct{ name, method, file, toolName string }{
		{"tairseach_contacts_list", "contacts.list", "core/contacts.json", "contacts.list"},
		{"tairseach_jira_issues_search", "jira.issues.search", "core/jira.json", "jira.issues.search"},
		{"tairseach_jira_sprints_list", "jira.sprints.list", "core/jira.json", "jira.sprints.list"},
		{"tairseach_op_items_get", "op.items.get", "core/onepassword.json", "op.items.get"},
		{"tairseach_files_read", "files.read", "core/files.json", "files.read"},
		{"tairseach_config_get", "config.get", "core/config.json", "config.get"},
	}
	for _, m := range mappings {
		tool, ok := r.Lookup(m.name)
		if !ok {
			t.Errorf("Lookup(%q) failed", m.name)
			continue
		}
		if tool.Method != m.method || tool.File != m.file || tool.ToolName != m.toolName || tool.Socket != "" {
			t.Errorf("%s = method %q in %s (%s), want %q in %s (%s)", m.name, tool.Method, tool.File, tool.ToolName, m.method, m.file, m.toolName)
		}
	}
	for _, hidden := range []string{"auth.token", "auth.gogPassphrase", "automation.run", "automation.click", "automation.type", "config.set", "files.write"} {
		name, _ := MCPName("tairseach_", hidden)
		if _, ok := r.Lookup(name); ok {
			t.Errorf("hidden tool %s is exposed as %s", hidden, name)
		}
		if s := findSkipped(r, hidden); s == nil || s.Reason != Hidden {
			t.Errorf("%s skipped as %+v, want Hidden", hidden, s)
		}
	}
	if s := findSkipped(r, "auth.credentials.rename"); s == nil || s.Reason != NoMethod || s.File != "core/auth.json" {
		t.Errorf("auth.credentials.rename skipped as %+v, want NoMethod in core/auth.json", s)
	}
	if s := findSkipped(r, "jira_issues_search"); s == nil || s.Reason != Duplicate ||
		s.Detail != "duplicate of tairseach_jira_issues_search (jira.issues.search) in core/jira.json" {
		t.Errorf("jira_issues_search skipped as %+v, want a Duplicate of the core tool", s)
	}

	for _, tool := range r.Tools {
		checkToolInvariants(t, tool)
	}
	for _, p := range r.Problems {
		if p.Severity == Error {
			t.Errorf("unexpected error problem: %v", p)
		}
	}

	var golden bytes.Buffer
	for _, tool := range r.Tools {
		fmt.Fprintf(&golden, "%s\t%s\t%s\n", tool.Name, tool.Method, tool.File)
	}
	fmt.Fprintln(&golden, "# skipped")
	for _, s := range r.Skipped {
		fmt.Fprintf(&golden, "%s\t%s\t%v\t%s\n", s.ToolName, s.File, s.Reason, s.Detail)
	}
	fmt.Fprintln(&golden, "# problems")
	for _, p := range r.Problems {
		fmt.Fprintln(&golden, p)
	}
	checkGolden(t, filepath.Join("testdata", "corpus.golden"), golden.Bytes())
}

func findSkipped(r *Registry, toolName string) *Skipped {
	for i := range r.Skipped {
		if r.Skipped[i].ToolName == toolName {
			return &r.Skipped[i]
		}
	}
	return nil
}

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run go test -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output (run go test -update and review the diff):\n%s", path, got)
	}
}

func BenchmarkLoadCorpus(b *testing.B) {
	loadCorpus(b)
	for b.Loop() {
		if _, err := Load(corpusDir, Options{Prefix: "tairseach_"}); err != nil {
			b.Fatal(err)
		}
	}
}
