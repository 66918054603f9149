package streamable

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestTokenHint: a refused client is told the token file as the user
// would type it, or that the token is in the server's environment.
func TestTokenHint(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for path, want := range map[string]string{
		filepath.Join(home, ".tairseach", "mcp-token"): "the token in ~/.tairseach/mcp-token",
		"/etc/tairseach/token":                         "the token in /etc/tairseach/token",
		"":                                             "the token in TAIRSEACH_MCP_TOKEN of the server's environment",
	} {
		if got := TokenHint(path); got != want {
			t.Errorf("TokenHint(%q) = %q, want %q", path, got, want)
		}
	}
}

// TestTokenFileRules: a token file is read only when its owner alone can
// read it, and never through a link; a missing one is made 0600 in a 0700
// directory, and servers starting at once all use the one that was made.
func TestTokenFileRules(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	if err := os.WriteFile(good, []byte("0123456789abcdef0123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if tok, err := ReadTokenFile(good); err != nil || tok != "0123456789abcdef0123" {
		t.Errorf("a 0600 file: %q, %v", tok, err)
	}
	open := filepath.Join(dir, "open")
	if err := os.WriteFile(open, []byte("0123456789abcdef0123"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadTokenFile(open); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a file others can read: %v", err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadTokenFile(link); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("a link: %v", err)
	}
	if err := CheckToken("short", "x"); err == nil {
		t.Error("a short token is accepted")
	}
	if err := CheckToken("0123456789abcdef 123", "x"); err == nil {
		t.Error("a token with a space is accepted")
	}

	path := filepath.Join(dir, "new", "mcp-token")
	if _, _, err := ReadOrMakeTokenFile(path, false); err == nil {
		t.Error("a missing file is made without create")
	}
	var wg sync.WaitGroup
	tokens := make([]string, 8)
	made := make([]bool, 8)
	for i := range tokens {
		wg.Go(func() {
			var err error
			tokens[i], made[i], err = ReadOrMakeTokenFile(path, true)
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	n := 0
	for i, tok := range tokens {
		if tok != tokens[0] || len(tok) != 64 {
			t.Errorf("server %d uses %q, server 0 %q", i, tok, tokens[0])
		}
		if made[i] {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d servers made the token, want 1", n)
	}
	for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v %v, want mode %v", p, fi.Mode().Perm(), err, want)
		}
	}
}
