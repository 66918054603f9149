package manifest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// writeTree creates files (slash paths relative to dir) with the given contents.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symbolic links unavailable: %v", err)
	}
}

func TestIsCandidate(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"contacts.json", true},
		{"a.b.json", true},
		{"#x.json", true},
		{"x.json~", false},
		{"#x.json#", false},
		{".#x.json", false},
		{".x.json", false},
		{".json", false},
		{"x.json.swp", false},
		{"x.json.swx", false},
		{"x.json.tmp", false},
		{"x.swp.json", true},
		{"4913", false},
		{"x.JSON", false},
		{"x.yaml", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := IsCandidate(tt.name); got != tt.want {
			t.Errorf("IsCandidate(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestScan(t *testing.T) {
	const m = `{"id":"x","tools":[]}`
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"linked.json": m, "deep/more.json": m})

	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"a.json":                  m,
		"core/b.json":             m,
		"core/nested/deeper.json": m,
		"notes.txt":               "not a manifest",
		".hidden.json":            m,
		".git/config.json":        m,
		".cache/sub/x.json":       m,
		"core/b.json~":            m,
		"core/#b.json#":           m,
		"core/.b.json.swp":        m,
		"core/b.json.swp":         m,
		"core/b.json.swx":         m,
		"core/b.json.tmp":         m,
		"core/4913":               "",
		"dir.json/inside.json":    m, // a directory named like a manifest is walked
	})
	symlink(t, "..", filepath.Join(dir, "core", "loop"))                      // loop to the root
	symlink(t, ".", filepath.Join(dir, "core", "nested", "self"))             // loop to itself
	symlink(t, outside, filepath.Join(dir, "ext"))                            // directory outside the tree
	symlink(t, filepath.Join("core", "b.json"), filepath.Join(dir, "l.json")) // link to a file
	symlink(t, "missing.json", filepath.Join(dir, "broken.json"))             // dangling link
	symlink(t, "missing-dir", filepath.Join(dir, "broken-dir"))               // dangling, not a candidate
	symlink(t, "a.json", filepath.Join(dir, ".#a.json"))                      // emacs lock file

	want := []string{
		"a.json",
		"core/b.json",
		"core/nested/deeper.json",
		"dir.json/inside.json",
		"ext/deep/more.json",
		"ext/linked.json",
		"l.json",
	}
	got, err := Scan(dir, Options{})
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("Scan:\n got %q\nwant %q", got, want)
	}

	_, problems, err := scan(dir, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	checkProblems(t, problems, []Problem{{File: "broken.json", Severity: Warning, Message: "skipping broken symbolic link"}})

	// The same through a symbolic link to the root.
	link := filepath.Join(t.TempDir(), "manifests")
	symlink(t, dir, link)
	if got, err := Scan(link, Options{}); err != nil || !slices.Equal(got, want) {
		t.Errorf("Scan through a link = %q, %v; want %q", got, err, want)
	}
}

func TestScanDirErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file.json")
	writeTree(t, dir, map[string]string{"file.json": "{}"})
	tests := []struct {
		name     string
		dir      string
		notExist bool
		msg      string
	}{
		{"missing", filepath.Join(dir, "nope"), true, "reading manifest directory: "},
		{"a file", file, false, "is not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Scan(tt.dir, Options{}); err == nil || !strings.Contains(err.Error(), tt.msg) || errors.Is(err, fs.ErrNotExist) != tt.notExist {
				t.Errorf("Scan error = %v; want %q, not-exist %v", err, tt.msg, tt.notExist)
			}
			r, err := Load(tt.dir, Options{})
			if err == nil || errors.Is(err, fs.ErrNotExist) != tt.notExist {
				t.Errorf("Load error = %v; want not-exist %v", err, tt.notExist)
			}
			if r == nil || len(r.Tools) != 0 || len(r.Files) != 0 {
				t.Errorf("Load returned %+v, want an empty registry", r)
			}
			if _, ok := r.Lookup("x"); ok {
				t.Error("Lookup in an empty registry succeeded")
			}
		})
	}
}

func TestLoad(t *testing.T) {
	good := manifestJSONFor("good", "", "a.one=a.one", "a.two=a.two")
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"core/good.json":        good,
		"core/other.json":       manifestJSONFor("other", "", "b=b"),
		"core/broken.json":      "{\n  \"tools\": [\n    {\"name\": }\n  ]\n}",
		"core/notools.json":     `{"id":"n"}`,
		"integrations/big.json": `{"id":"big","tools":[]}` + strings.Repeat(" ", 300),
		"integrations/dup.json": manifestJSONFor("dup", "", "a_one=a.one"),
	})
	r, err := Load(dir, Options{Prefix: "t_", MaxFileSize: 200, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	var names []string
	for _, tool := range r.Tools {
		names = append(names, tool.Name)
	}
	if want := []string{"t_a_one", "t_a_two", "t_b"}; !slices.Equal(names, want) {
		t.Errorf("names = %q, want %q", names, want)
	}
	if want := []string{"core/good.json", "core/other.json", "integrations/dup.json"}; !slices.Equal(r.Files, want) {
		t.Errorf("Files = %q, want %q", r.Files, want)
	}
	wantErrs := []struct {
		path string
		line int
		msg  string
	}{
		{"core/broken.json", 3, "core/broken.json:3:14: invalid JSON: invalid character '}'"},
		{"core/notools.json", 0, `core/notools.json: missing "tools" array`},
		{"integrations/big.json", 0, "integrations/big.json: file too large: 323 bytes, the limit is 200"},
	}
	if len(r.FileErrors) != len(wantErrs) {
		t.Fatalf("FileErrors = %v, want %d", r.FileErrors, len(wantErrs))
	}
	for i, w := range wantErrs {
		fe := r.FileErrors[i]
		if fe.Path != w.path || fe.Line != w.line || fe.Error() != w.msg && !strings.HasPrefix(fe.Error(), w.msg) {
			t.Errorf("FileErrors[%d] = %q (line %d), want %q", i, fe, fe.Line, w.msg)
		}
	}
	if !errors.Is(r.FileErrors[2], ErrTooLarge) {
		t.Errorf("%v is not ErrTooLarge", r.FileErrors[2])
	}
	if len(r.Skipped) != 1 || r.Skipped[0].Reason != Duplicate || r.Skipped[0].File != "integrations/dup.json" {
		t.Errorf("Skipped = %+v, want one duplicate from integrations/dup.json", r.Skipped)
	}
}

func TestLoadLogs(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"a.json": manifestJSONFor("a", "", "x=x", "y=y"),
		"b.json": manifestJSONFor("b", "", "x=x", "y=other"),
		"c.json": "nope",
	})
	var buf strings.Builder
	if _, err := Load(dir, Options{Logger: zerolog.New(&buf)}); err != nil {
		t.Fatal(err)
	}
	// Each finding at debug level, once; the summary at info.
	for _, want := range []string{
		`{"level":"debug","error":"c.json:1:2: invalid JSON: invalid character 'o' in literal null (expecting 'u')","file":"c.json","message":"manifest rejected"}`,
		`{"level":"debug","file":"b.json","tool":"y","severity":"warning"`,
		`{"level":"debug","file":"b.json","tool":"x","name":"x","reason":"duplicate name","message":"duplicate of x (x) in a.json"}`,
		`{"level":"info",`,
		`"files":2,"tools":2,"skipped":2,"problems":1,"file_errors":1,"message":"manifests loaded"}`,
	} {
		if strings.Count(buf.String(), want) != 1 {
			t.Errorf("log lacks %s, or has it twice:\n%s", want, buf.String())
		}
	}
	if strings.Contains(buf.String(), `"level":"warn"`) || strings.Contains(buf.String(), `"level":"error"`) {
		t.Errorf("the manifests' findings are logged above debug:\n%s", buf.String())
	}
	// The zero Logger is silent and safe.
	if _, err := Load(dir, Options{}); err != nil {
		t.Fatal(err)
	}
}
