package main

// Tests of the backups install and uninstall make before they write.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/geilt/tairseach-mcp/cmd/tairseach-mcp/internal/install"
	"github.com/geilt/tairseach-mcp/internal/clientconfig"
)

// TestInstallBackups: every change to a file is backed up first, to a
// backup of its own holding the file as it was just before, named in the
// output; a run that changes nothing makes none; the last
// clientconfig.KeepBackups stay; a number is never used twice, even when
// an earlier backup was removed.
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
	if backedUp[0] != fixtures["mcpServers"] || !strings.Contains(backedUp[1], `"--prefix=a_"`) || !strings.Contains(backedUp[2], `"--prefix=b_"`) || strings.Contains(backedUp[3], install.EntryName) {
		t.Errorf("the states backed up are not the file before each change:\n%s", strings.Join(backedUp, "\n----\n"))
	}
	files, _ := dirSnapshot(t, filepath.Dir(path))
	if len(files) != 1+clientconfig.KeepBackups {
		t.Errorf("want mcp.json and %d backups; files: %v", clientconfig.KeepBackups, files)
	}
	for i, want := range backedUp {
		name := clientconfig.BackupName(path, i+1)
		got, ok := files[filepath.Base(name)]
		if i < len(backedUp)-clientconfig.KeepBackups {
			if ok {
				t.Errorf("%s, older than the last %d, is still there", name, clientconfig.KeepBackups)
			}
			continue
		}
		if got != want {
			t.Errorf("%s:\n%s\nwant the file before change %d:\n%s", name, got, i+1, want)
		}
		if fi, err := os.Stat(name); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, want mode 0600", name, err)
		}
	}
	if filepath.Base(clientconfig.BackupName(path, 1)) != "mcp.json.tairseach-backup" || filepath.Base(clientconfig.BackupName(path, 2)) != "mcp.json.tairseach-backup.2" {
		t.Errorf("backups are named %s, %s", clientconfig.BackupName(path, 1), clientconfig.BackupName(path, 2))
	}

	// An earlier backup removed, the next change still takes a new number.
	if err := os.Remove(clientconfig.BackupName(path, 2)); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	if _, stderr, code := cli("", "--prefix", "d_", "install", "cursor"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got, err := os.ReadFile(clientconfig.BackupName(path, 5)); err != nil || string(got) != string(before) {
		t.Errorf("%s: %v\n%s\nwant\n%s", clientconfig.BackupName(path, 5), err, got, before)
	}
	if _, err := os.Stat(clientconfig.BackupName(path, 2)); err == nil {
		t.Errorf("%s was made again", clientconfig.BackupName(path, 2))
	}
}

// TestInstallBackupsBounded: many changes to a big file that holds a key
// leave the file and clientconfig.KeepBackups backups on disk, the newest,
// each 0600 though the file is 0644, and no more bytes than that; the
// user's files of like names are neither removed nor followed.
func TestInstallBackupsBounded(t *testing.T) {
	home := installHome(t)
	path := configPathOf(t, "claude-code")
	// A Claude Code file with the user's key and a long history, ~100 KB.
	var b strings.Builder
	b.WriteString(`{"primaryApiKey": "sk-ant-api03-secret", "projects": {`)
	for i := range 1000 {
		fmt.Fprintf(&b, "%q: {\"history\": [%q]},\n", fmt.Sprintf("/p/%d", i), strings.Repeat("x", 64))
	}
	b.WriteString(`"/": {}}}`)
	writeFixture(t, path, b.String())
	outside := filepath.Join(home, "elsewhere")
	writeFixture(t, outside, "the user's\n")
	mine := map[string]string{ // the user's own files, of names like a backup's
		filepath.Base(path) + ".tairseach-backup.mine":   "a",
		filepath.Base(path) + ".tairseach-backup.1":      "b",
		filepath.Base(path) + ".tairseach-backup.007":    "c",
		filepath.Base(path) + ".tairseach-backup.2.orig": "d",
		filepath.Base(path) + ".tairseach-backup-old":    "e",
		filepath.Base(path) + ".bak":                     "f",
		"other.json.tairseach-backup":                    "g",
	}
	for name, content := range mine {
		writeFixture(t, filepath.Join(home, name), content)
	}
	link := clientconfig.BackupName(path, 2) // a link where a backup would be
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}

	const changes = 12
	var states []string // the file before each change
	for i := range changes {
		before, _ := os.ReadFile(path)
		states = append(states, string(before))
		stdout, stderr, code := cli("", "--prefix", fmt.Sprintf("p%d_", i), "install", "claude-code")
		if code != 0 {
			t.Fatalf("install %d: exit %d\n%s%s", i, code, stdout, stderr)
		}
		if !strings.Contains(stdout, "(the old file is in "+path+clientconfig.BackupSuffix) {
			t.Errorf("install %d: stdout %q does not say where the backup is", i, stdout)
		}
	}

	var backups []string
	var size int64
	entries, _ := os.ReadDir(home)
	for _, e := range entries {
		fi, err := os.Lstat(filepath.Join(home, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if mine[e.Name()] != "" || !fi.Mode().IsRegular() || e.Name() == "elsewhere" {
			continue
		}
		size += fi.Size()
		if e.Name() != filepath.Base(path) {
			backups = append(backups, e.Name())
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("%s: mode %v, want 0600", e.Name(), fi.Mode().Perm())
			}
		}
	}
	if len(backups) != clientconfig.KeepBackups {
		t.Errorf("after %d changes: backups %v, want %d", changes, backups, clientconfig.KeepBackups)
	}
	fileSize := int64(len(states[changes-1]))
	if limit := (1 + int64(clientconfig.KeepBackups)) * (fileSize + 1024); size > limit {
		t.Errorf("after %d changes of a %d-byte file: %d bytes on disk, want at most %d", changes, fileSize, size, limit)
	}
	// The newest states, under the newest numbers; the link was skipped.
	for i := changes - clientconfig.KeepBackups; i < changes; i++ {
		name := clientconfig.BackupName(path, i+2)
		if got, err := os.ReadFile(name); err != nil || string(got) != states[i] {
			t.Errorf("%s: %v; want the file before change %d", name, err, i+1)
		}
	}
	for name, content := range mine {
		if got, err := os.ReadFile(filepath.Join(home, name)); err != nil || string(got) != content {
			t.Errorf("the user's %s: %q, %v; want it as it was", name, got, err)
		}
	}
	if got, err := os.Readlink(link); err != nil || got != outside {
		t.Errorf("the user's link %s: %q, %v; want it as it was", link, got, err)
	}
	if got, _ := os.ReadFile(outside); string(got) != "the user's\n" {
		t.Errorf("a backup was written through the user's link: %q", got)
	}
}
