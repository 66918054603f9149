package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCallRawShowsPictures: call --raw prints every content block of the
// result, the picture a result points to included, as the same call over
// stdio returns them.
func TestCallRawShowsPictures(t *testing.T) {
	cleanEnv(t)
	noFeatureDirs(t)
	dir := shortDir(t)
	sock := filepath.Join(dir, "s.sock")
	manifests := filepath.Join(dir, "manifests")
	if err := os.MkdirAll(manifests, 0o700); err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join(repoRoot, "manifests.example", "screen.json"), filepath.Join(manifests, "screen.json"), 0o644)
	startBackend(t, sock)

	type block struct{ Type, MIMEType, Data string }
	var raw struct{ Content []block }
	stdout, stderr, code := cli("", "--manifests", manifests, "--socket", sock, "call", "--raw", "screen.capture")
	if code != 0 || json.Unmarshal([]byte(stdout), &raw) != nil {
		t.Fatalf("call --raw: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	cmd := exec.Command(bridgeBin, "--manifests", manifests, "--socket", sock)
	cmd.Env = append(bridgeEnv(), "HOME="+dir)
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tairseach_screen_capture","arguments":{}}}` + "\n")
	out, err := cmd.Output()
	var wire struct{ Result struct{ Content []block } }
	if err != nil || json.Unmarshal(out, &wire) != nil {
		t.Fatalf("stdio: %v\n%s", err, out)
	}

	kinds := func(bs []block) (s []string) {
		for _, b := range bs {
			s = append(s, b.Type+" "+b.MIMEType)
		}
		return s
	}
	got, want := strings.Join(kinds(raw.Content), ", "), strings.Join(kinds(wire.Result.Content), ", ")
	if got != want || want != "text , image image/png" {
		t.Errorf("call --raw content: %s; over stdio: %s (want text, then the PNG)", got, want)
	}
	if len(raw.Content) == 2 && raw.Content[1].Data == "" {
		t.Errorf("call --raw's picture has no data")
	}
}
