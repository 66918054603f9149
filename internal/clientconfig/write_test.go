package clientconfig

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// symlink makes the link at path, with the text to, or fails the test.
func symlink(t *testing.T, to, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(to, path); err != nil {
		t.Fatal(err)
	}
}

// TestWriteThroughLinks: a write to a link, or a chain of them, live or
// dangling, writes the file at the end and leaves every link as it was;
// a relative link's ".." is taken from where the link really is; the
// backup is beside the name written to, not beside the target.
func TestWriteThroughLinks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		links func(t *testing.T, home string) (path, target string, links map[string]string)
	}{
		{"chain of two, dangling", func(t *testing.T, home string) (string, string, map[string]string) {
			links := map[string]string{
				filepath.Join(home, ".codex", "config.toml"):  "../dotfiles/codex.toml",
				filepath.Join(home, "dotfiles", "codex.toml"): filepath.Join(home, "repo", "codex.toml"),
			}
			os.MkdirAll(filepath.Join(home, "repo"), 0o755)
			return filepath.Join(home, ".codex", "config.toml"), filepath.Join(home, "repo", "codex.toml"), links
		}},
		{"relative link in a linked directory", func(t *testing.T, home string) (string, string, map[string]string) {
			// ~/.codex is a link to dotfiles/codex; ~/.codex/config.toml
			// is "../shared/config.toml", which is dotfiles/shared/config.toml,
			// not ~/shared/config.toml.
			os.MkdirAll(filepath.Join(home, "dotfiles", "codex"), 0o755)
			os.MkdirAll(filepath.Join(home, "dotfiles", "shared"), 0o755)
			os.MkdirAll(filepath.Join(home, "shared"), 0o755)
			links := map[string]string{
				filepath.Join(home, ".codex"):                           "dotfiles/codex",
				filepath.Join(home, "dotfiles", "codex", "config.toml"): "../shared/config.toml",
			}
			return filepath.Join(home, ".codex", "config.toml"), filepath.Join(home, "dotfiles", "shared", "config.toml"), links
		}},
	} {
		for _, live := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/live=%v", tc.name, live), func(t *testing.T) {
				home := t.TempDir()
				path, target, links := tc.links(t, home)
				for p, to := range links {
					symlink(t, to, p)
				}
				var old []byte
				if live {
					old = []byte("before")
					if err := os.WriteFile(target, old, 0o640); err != nil {
						t.Fatal(err)
					}
				}
				backup, err := Write(path, []byte("after"), old, 0o600)
				if err != nil {
					t.Fatal(err)
				}
				for p, to := range links {
					if got, err := os.Readlink(p); err != nil || got != to {
						t.Errorf("the link %s reads %q, %v; want %q as it was", p, got, err, to)
					}
				}
				if got, err := os.ReadFile(target); err != nil || string(got) != "after" {
					t.Errorf("the target %s holds %q, %v", target, got, err)
				}
				if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != 0o600 {
					t.Errorf("the target's mode: %v, %v", fi.Mode(), err)
				}
				if !live {
					if backup != "" {
						t.Errorf("a backup %s of no file", backup)
					}
					return
				}
				if backup != path+BackupSuffix {
					t.Errorf("the backup is %s, want %s beside the link", backup, path+BackupSuffix)
				}
				if got, err := os.ReadFile(backup); err != nil || string(got) != "before" {
					t.Errorf("the backup holds %q, %v", got, err)
				}
				if entries, _ := os.ReadDir(filepath.Dir(target)); len(entries) != 1 {
					t.Errorf("the target's directory holds %v, want the target only", entries)
				}
				// Backups that earlier versions made beside the target: the
				// last KeepBackups stay.
				for n := 1; n <= 5; n++ {
					if err := os.WriteFile(BackupName(target, n), nil, 0o600); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := Write(path, []byte("again"), []byte("after"), 0o600); err != nil {
					t.Fatal(err)
				}
				if entries, _ := os.ReadDir(filepath.Dir(target)); len(entries) != 1+KeepBackups {
					t.Errorf("the target's directory holds %v, want the target and %d backups", entries, KeepBackups)
				}
			})
		}
	}
}

// TestWriteLinkErrors: a link that cannot be written through is an error
// that names the link, its target and what to do, and the link stays.
func TestWriteLinkErrors(t *testing.T) {
	unwritable := t.TempDir()
	switch {
	case os.Geteuid() != 0:
		if err := os.Chmod(unwritable, 0o500); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(unwritable, 0o700) })
	case runtime.GOOS == "linux":
		unwritable = "/proc" // even root makes no file there
	default:
		unwritable = ""
	}
	for _, tc := range []struct {
		name string
		to   func(home string) string // the link's text
		want []string                 // in the error
	}{
		{"target's directory missing", func(home string) string { return filepath.Join(home, "dotfiles", "codex", "config.toml") },
			[]string{"is a link to", filepath.Join("dotfiles", "codex", "config.toml"), "mkdir -p", "run this again"}},
		{"loop", func(home string) string { return "config.toml" }, []string{"symbolic links in a row", "loop"}},
		{"target a directory", func(home string) string { return home }, []string{"not a regular file"}},
		{"directory not writable", func(home string) string { return filepath.Join(unwritable, "tairseach-test.json") },
			[]string{"the target of the link", "tairseach-test.json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "directory not writable" && unwritable == "" {
				t.Skip("no directory here that root cannot write")
			}
			home := t.TempDir()
			path := filepath.Join(home, "config.toml")
			to := tc.to(home)
			symlink(t, to, path)
			_, err := Write(path, []byte("x"), nil, 0o600)
			if err == nil {
				t.Fatal("written")
			}
			t.Log(err)
			for _, w := range append(tc.want, path) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if got, err := os.Readlink(path); err != nil || got != to {
				t.Errorf("the link reads %q, %v; want %q as it was", got, err, to)
			}
			if entries, _ := os.ReadDir(home); len(entries) != 1 {
				t.Errorf("the directory holds %v, want the link only", entries)
			}
		})
	}
}

// TestWriteDanglingDirectory: a missing directory is made, but one that
// is a dangling link (~/.codex into dotfiles not made yet) is the user's:
// an error, and the link stays.
func TestWriteDanglingDirectory(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, ".codex")
	symlink(t, "dotfiles/codex", dir)
	_, err := Write(filepath.Join(dir, "config.toml"), []byte("x"), nil, 0o600)
	if err == nil || !strings.Contains(err.Error(), dir+" is a link to dotfiles/codex, which does not exist") {
		t.Errorf("error %v; want it to name the link and its target", err)
	}
	if got, err := os.Readlink(dir); err != nil || got != "dotfiles/codex" {
		t.Errorf("the link reads %q, %v", got, err)
	}
	// A live link to a directory (~/.config in dotfiles) with a directory
	// missing below it: that one is made, through the link, which stays.
	if err := os.MkdirAll(filepath.Join(home, "dotfiles", "config"), 0o700); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(home, ".config")
	symlink(t, "dotfiles/config", config)
	if _, err := Write(filepath.Join(config, "Claude", "claude_desktop_config.json"), []byte("x"), nil, 0o600); err != nil {
		t.Fatalf("through a live link to a directory: %v", err)
	}
	if got, err := os.ReadFile(filepath.Join(home, "dotfiles", "config", "Claude", "claude_desktop_config.json")); err != nil || string(got) != "x" {
		t.Errorf("the target holds %q, %v", got, err)
	}
	if got, err := os.Readlink(config); err != nil || got != "dotfiles/config" {
		t.Errorf("the link reads %q, %v", got, err)
	}
	// Not a link: made, 0700.
	path := filepath.Join(home, ".cursor", "sub", "mcp.json")
	if _, err := Write(path, []byte("x"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Dir(path)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the directory made: %v, %v", fi.Mode(), err)
	}
}

// TestWriteHardLinks: a file with another name (a hard link) is written
// in place, so that the other name sees the change too.
func TestWriteHardLinks(t *testing.T) {
	dir := t.TempDir()
	path, other := filepath.Join(dir, "mcp.json"), filepath.Join(dir, "dotfiles-mcp.json")
	if err := os.WriteFile(path, []byte("before, a longer text"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(path, other); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(path, []byte("after"), []byte("before, a longer text"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, other} {
		if got, err := os.ReadFile(p); err != nil || string(got) != "after" {
			t.Errorf("%s holds %q, %v", p, got, err)
		}
	}
	a, _ := os.Stat(path)
	b, _ := os.Stat(other)
	if !os.SameFile(a, b) {
		t.Error("the two names are no longer one file")
	}
}

// A file another program wrote between its read and its write (Claude
// Code rewrites ~/.claude.json all the time) is left as that program
// wrote it: nothing is written, no backup is made, and the backups there
// are kept, every one: a write that is not made lets none of them go.
func TestWriteLeavesAChangedFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.json")
	for n := 1; n <= KeepBackups; n++ {
		if err := os.WriteFile(BackupName(path, n), []byte(`{"precious":`+strconv.Itoa(n)+`}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	read := []byte(`{"numStartups":1}`)
	theirs := []byte(`{"numStartups":999}`)
	if err := os.WriteFile(path, theirs, 0o600); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		backup, err := Write(path, []byte(`{"numStartups":1,"mcpServers":{}}`), read, 0o600)
		if !errors.Is(err, ErrChanged) || backup != "" {
			t.Fatalf("Write of a changed file: %q, %v; want ErrChanged", backup, err)
		}
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, theirs) {
		t.Errorf("the other program's write was lost: %s", got)
	}
	for n := 1; n <= KeepBackups+2; n++ {
		got, err := os.ReadFile(BackupName(path, n))
		if n <= KeepBackups && string(got) != `{"precious":`+strconv.Itoa(n)+`}` {
			t.Errorf("backup %d: %q, %v", n, got, err)
		}
		if n > KeepBackups && err == nil {
			t.Errorf("a backup %d was made of a write not made", n)
		}
	}
	// A file that appeared meanwhile is another program's too.
	fresh := filepath.Join(dir, "fresh.json")
	if err := os.WriteFile(fresh, theirs, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(fresh, []byte(`{}`), nil, 0o600); !errors.Is(err, ErrChanged) {
		t.Errorf("Write over a file made meanwhile: %v; want ErrChanged", err)
	}
}

// A file of another user (sudo with the user's HOME) is not taken over:
// a rename would leave the file, and its backup, root's.
func TestWriteLeavesAnotherUsersFile(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making a file of another user needs root")
	}
	path := filepath.Join(t.TempDir(), "c.json")
	if err := os.WriteFile(path, []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(path, []byte(`{"a":1}`), []byte(`{}`), 0o600); err == nil || !strings.Contains(err.Error(), "another user") {
		t.Fatalf("Write of another user's file: %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != `{}` {
		t.Errorf("the file was written: %s", got)
	}
	if _, err := os.Stat(BackupName(path, 1)); err == nil {
		t.Error("a backup was made")
	}
}
