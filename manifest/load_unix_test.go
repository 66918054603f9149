//go:build unix

package manifest

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
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

// TestLoadSpecialFileSwappedIn replaces a manifest by a FIFO, a socket, a
// directory and a symbolic link to /dev/zero between the scan and the open:
// Load must report the file and never block on it.
func TestLoadSpecialFileSwappedIn(t *testing.T) {
	swaps := map[string]func(t *testing.T, name string){
		"fifo": func(t *testing.T, name string) {
			if err := syscall.Mkfifo(name, 0o644); err != nil {
				t.Fatalf("mkfifo: %v", err)
			}
		},
		"socket": func(t *testing.T, name string) {
			l, err := net.Listen("unix", name)
			if err != nil {
				t.Fatalf("listen: %v", err)
			}
			t.Cleanup(func() { l.Close() })
		},
		"directory": func(t *testing.T, name string) {
			if err := os.Mkdir(name, 0o755); err != nil {
				t.Fatal(err)
			}
		},
		"dev-zero": func(t *testing.T, name string) { symlink(t, "/dev/zero", name) },
	}
	for kind, swap := range swaps {
		t.Run(kind, func(t *testing.T) {
			dir := shortTempDir(t)
			writeTree(t, dir, map[string]string{
				"a.json": manifestJSONFor("a", "", "a=a"),
				"b.json": manifestJSONFor("b", "", "b=b"),
			})
			victim := filepath.Join(dir, "b.json")
			testHookBeforeOpen = func(name string) {
				if name != victim {
					return
				}
				if err := os.Remove(name); err != nil {
					t.Error(err)
					return
				}
				swap(t, name)
			}
			t.Cleanup(func() { testHookBeforeOpen = nil })

			done := make(chan *Registry, 1)
			go func() {
				r, err := Load(dir, Options{})
				if err != nil {
					t.Errorf("Load: %v", err)
				}
				done <- r
			}()
			var r *Registry
			select {
			case r = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("Load blocked on a special file")
			}
			if !slices.Equal(r.Files, []string{"a.json"}) {
				t.Errorf("Files = %q, want [a.json]", r.Files)
			}
			if len(r.FileErrors) != 1 || r.FileErrors[0].Path != "b.json" ||
				!strings.Contains(r.FileErrors[0].Error(), "not a regular file") {
				t.Errorf("FileErrors = %v, want b.json: not a regular file", r.FileErrors)
			}
		})
	}
}

// shortTempDir returns a temporary directory with a path short enough for a
// Unix socket.
func shortTempDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "m")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
