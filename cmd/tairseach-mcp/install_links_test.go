package main

// Tests of install and uninstall on client files the user links
// (dotfiles): the link stays, its target is written.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/geilt/tairseach-mcp/cmd/tairseach-mcp/internal/install"
	"github.com/geilt/tairseach-mcp/internal/clientconfig"
)

// TestInstallKeepsLinks: for every client, a file that is a symlink to a
// dotfile, live or dangling (the dotfile not made yet), by a relative or an
// absolute path, stays that link with the same text after install and
// uninstall; the dotfile holds the entry, then not; the backups are beside
// the link, none in the directory it points into.
func TestInstallKeepsLinks(t *testing.T) {
	for _, c := range install.Clients {
		for _, live := range []bool{true, false} {
			for _, rel := range []bool{true, false} {
				name := fmt.Sprintf("%s/live=%v,relative=%v", c.Name, live, rel)
				t.Run(name, func(t *testing.T) {
					home := installHome(t)
					path := configPathOf(t, c.Name)
					dotfiles := filepath.Join(home, "dotfiles", c.Name)
					for _, d := range []string{dotfiles, filepath.Dir(path)} {
						if err := os.MkdirAll(d, 0o755); err != nil {
							t.Fatal(err)
						}
					}
					target := filepath.Join(dotfiles, filepath.Base(path))
					text := target
					if rel {
						var err error
						if text, err = filepath.Rel(filepath.Dir(path), target); err != nil {
							t.Fatal(err)
						}
					}
					if live {
						writeFixture(t, target, fixture(t, c))
					}
					if err := os.Symlink(text, path); err != nil {
						t.Fatal(err)
					}
					for _, args := range [][]string{
						append(slices.Clone(fixedFlags), "install", c.Name),
						{"uninstall", c.Name},
					} {
						stdout, stderr, code := cli("", args...)
						if code != 0 {
							t.Fatalf("%v: exit %d\n%s%s", args, code, stdout, stderr)
						}
						if got, err := os.Readlink(path); err != nil || got != text {
							t.Fatalf("%v: %s is no longer the link to %s: %q, %v", args, path, text, got, err)
						}
						data, err := os.ReadFile(target)
						if err != nil {
							t.Fatalf("%v: the link's target: %v", args, err)
						}
						if has := entryOf(t, c, data) != nil; has != (args[len(args)-2] == "install") {
							t.Errorf("%v: the link's target has the entry: %v\n%s", args, has, data)
						}
					}
					if data, _ := os.ReadFile(target); live && string(data) != fixture(t, c) {
						t.Errorf("after uninstall the dotfile is not as it was:\n%s", data)
					}
					entries, _ := os.ReadDir(dotfiles)
					if len(entries) != 1 {
						t.Errorf("the dotfiles directory holds %v, want only the file", entries)
					}
					if b, err := os.ReadFile(path + clientconfig.BackupSuffix); live && (err != nil || string(b) != fixture(t, c)) {
						t.Errorf("the backup beside the link: %v\n%s", err, b)
					}
				})
			}
		}
	}
}
