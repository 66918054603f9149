//go:build unix

package manifest

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

func TestScanSkipsNonRegularFiles(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.json": `{"id":"a","tools":[]}`})
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.json"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	symlink(t, "pipe.json", filepath.Join(dir, "pipe-link.json"))
	symlink(t, "/dev/null", filepath.Join(dir, "null.json"))

	got, err := Scan(dir, Options{})
	if err != nil || !slices.Equal(got, []string{"a.json"}) {
		t.Fatalf("Scan = %q, %v; want [a.json]", got, err)
	}
	// Load must not block on the pipe.
	r, err := Load(dir, Options{})
	if err != nil || len(r.Files) != 1 || len(r.FileErrors) != 0 {
		t.Fatalf("Load = %+v, %v", r, err)
	}
}

func TestLoadUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("permissions do not apply to root")
	}
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"a.json":        manifestJSONFor("a", "", "a=a"),
		"locked/b.json": manifestJSONFor("b", "", "b=b"),
		"secret.json":   manifestJSONFor("s", "", "s=s"),
	})
	locked, secret := filepath.Join(dir, "locked"), filepath.Join(dir, "secret.json")
	for _, p := range []string{locked, secret} {
		if err := os.Chmod(p, 0); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { os.Chmod(locked, 0o755) })

	r, err := Load(dir, Options{})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if !slices.Equal(r.Files, []string{"a.json"}) {
		t.Errorf("Files = %q, want [a.json]", r.Files)
	}
	checkProblems(t, r.Problems, []Problem{{File: "locked", Severity: Error, Message: "skipping directory"}})
	if len(r.FileErrors) != 1 || r.FileErrors[0].Path != "secret.json" {
		t.Errorf("FileErrors = %v, want secret.json", r.FileErrors)
	}

	// An unreadable root is an error.
	if err := os.Chmod(locked, 0o755); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := os.Chmod(root, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(root, 0o755) })
	if _, err := Load(root, Options{}); err == nil {
		t.Error("Load of an unreadable directory succeeded")
	}
}
