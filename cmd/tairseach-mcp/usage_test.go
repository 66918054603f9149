package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestToolsFailsWithoutTools: tools exits 1, saying why, when the
// manifests' errors leave no tool at all; an empty directory is not an
// error, and neither are errors beside tools that load.
func TestToolsFailsWithoutTools(t *testing.T) {
	cleanEnv(t)
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, "a.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	mixed := t.TempDir()
	copyFile(t, filepath.Join(exampleDir, "server.json"), filepath.Join(mixed, "server.json"), 0o644)
	if err := os.WriteFile(filepath.Join(mixed, "b.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"every manifest broken", []string{"--manifests", broken, "tools"}, 1,
			"tairseach-mcp: no tools: every manifest in " + broken + " failed to load (1 file); tairseach-mcp validate says why\n"},
		{"every manifest broken, as JSON", []string{"--manifests", broken, "tools", "--json"}, 1, "failed to load (1 file)"},
		{"empty directory", []string{"--manifests", t.TempDir(), "tools"}, 0, "tairseach-mcp: no tools in "},
		{"one manifest broken", []string{"--manifests", mixed, "tools"}, 0, "some manifests or tools have errors"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := cli("", append([]string{"--socket", fixedSocket}, tt.args...)...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, tt.code, tt.want)
			}
		})
	}
}

// TestCallFailureSaidWhole: the line call writes on stderr about a failed
// tool keeps the whole of the bridge's own message, however long the
// socket path in it (it was cut at 200 characters, mid-word).
func TestCallFailureSaidWhole(t *testing.T) {
	cleanEnv(t)
	sock := filepath.Join("/tmp", strings.Repeat("a", 60), "Library", "Application Support", "Tairseach", "tairseach.sock")
	_, stderr, code := cli("", "--manifests", exampleDir, "--socket", sock, "call", "contacts.list")
	if code != 1 || !strings.HasSuffix(stderr, "point --socket / TAIRSEACH_SOCKET at its socket (tairseach-mcp doctor checks the setup)\n") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

func TestShorten(t *testing.T) {
	for _, tt := range []struct {
		in   string
		most int
		want string
	}{
		{"short", 10, "short"},
		{"the server is not reachable at this path", 20, "the server is not …"},
		{"one; two three", 5, "one …"},
		{"abcdefghijklmnop", 8, "abcdefgh …"},
	} {
		if got := shorten(tt.in, tt.most); got != tt.want {
			t.Errorf("shorten(%q, %d) = %q, want %q", tt.in, tt.most, got, tt.want)
		}
	}
}
