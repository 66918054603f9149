package main

import (
	"path/filepath"
	"strings"
	"testing"
)

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
