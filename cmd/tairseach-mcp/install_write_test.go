package main

// Tests of the backups install and uninstall make before they write.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/geilt/tairseach-mcp/internal/clientconfig"
)

// TestInstallBackups: every change to a file is backed up first, to a
// backup of its own holding the file as it was just before; a run that
// changes nothing makes none; a number is never used twice, even when an
// earlier backup was removed.
func TestInstallBackups(t *testing.T) {
	installHome(t)
	path := configPathOf(t, "cursor")
	writeFixture(t, path, fixtures["mcpServers"])
	var backedUp []string // the file before each change, in order
	for _, args := range [][]string{
		{"--prefix", "a_", "install", "cursor"},
		{"--prefix", "a_", "install", "cursor"}, // no change
		{"--prefix", "b_", "install", "cursor"},
		{"uninstall", "cursor"},
		{"uninstall", "cursor"}, // nothing to remove
		{"--prefix", "c_", "install", "cursor"},
	} {
		before, _ := os.ReadFile(path)
		stdout, stderr, code := cli("", args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, code, stdout, stderr)
		}
		after, _ := os.ReadFile(path)
		if string(after) == string(before) {
			if strings.Contains(stdout, clientconfig.BackupSuffix) {
				t.Errorf("%v changed nothing, yet speaks of a backup: %s", args, stdout)
			}
			continue
		}
		backedUp = append(backedUp, string(before))
		if name := clientconfig.BackupName(path, len(backedUp)); !strings.Contains(stdout, "(the old file is in "+name+")") {
			t.Errorf("%v: stdout %q does not name %s", args, stdout, name)
		}
	}
	if len(backedUp) != 4 {
		t.Fatalf("%d changes, want 4: install, install with other flags, uninstall, install", len(backedUp))
	}
	if backedUp[0] != fixtures["mcpServers"] || !strings.Contains(backedUp[1], `"--prefix=a_"`) || !strings.Contains(backedUp[2], `"--prefix=b_"`) || strings.Contains(backedUp[3], entryName) {
		t.Errorf("the states backed up are not the file before each change:\n%s", strings.Join(backedUp, "\n----\n"))
	}
	files, _ := dirSnapshot(t, filepath.Dir(path))
	if len(files) != 1+len(backedUp) {
		t.Errorf("want mcp.json and %d backups; files: %v", len(backedUp), files)
	}
	for i, want := range backedUp {
		name := clientconfig.BackupName(path, i+1)
		if got := files[filepath.Base(name)]; got != want {
			t.Errorf("%s:\n%s\nwant the file before change %d:\n%s", name, got, i+1, want)
		}
		if fi, err := os.Stat(name); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, want mode 0600", name, err)
		}
	}
	if filepath.Base(clientconfig.BackupName(path, 1)) != "mcp.json.tairseach-backup" || filepath.Base(clientconfig.BackupName(path, 2)) != "mcp.json.tairseach-backup.2" {
		t.Errorf("backups are named %s, %s", clientconfig.BackupName(path, 1), clientconfig.BackupName(path, 2))
	}

	// The first backup removed, the next change still takes a new number.
	if err := os.Remove(clientconfig.BackupName(path, 1)); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	if _, stderr, code := cli("", "--prefix", "d_", "install", "cursor"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got, err := os.ReadFile(clientconfig.BackupName(path, 5)); err != nil || string(got) != string(before) {
		t.Errorf("%s: %v\n%s\nwant\n%s", clientconfig.BackupName(path, 5), err, got, before)
	}
	if _, err := os.Stat(clientconfig.BackupName(path, 1)); err == nil {
		t.Errorf("%s was made again", clientconfig.BackupName(path, 1))
	}
}
