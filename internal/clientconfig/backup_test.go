package clientconfig

import (
	"os"
	"path/filepath"
	"testing"
)

// TestBackup: each backup has a name of its own, one more than the highest
// there, whichever were removed; it holds the data given, 0600.
func TestBackup(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp.json")
	for i, want := range []string{"mcp.json.tairseach-backup", "mcp.json.tairseach-backup.2", "mcp.json.tairseach-backup.3"} {
		name, err := Backup(path, []byte{byte('a' + i)})
		if err != nil || filepath.Base(name) != want {
			t.Fatalf("backup %d: %s, %v; want %s", i+1, name, err, want)
		}
		if b, err := os.ReadFile(name); err != nil || string(b) != string(rune('a'+i)) {
			t.Errorf("%s holds %q, %v", name, b, err)
		}
		if fi, err := os.Stat(name); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, want mode 0600", name, err)
		}
	}
	// Neither a gap nor other files change the next number.
	for _, name := range []string{BackupName(path, 1), BackupName(path, 2)} {
		if err := os.Remove(name); err != nil {
			t.Fatal(err)
		}
	}
	for _, other := range []string{"mcp.json.tairseach-backup.x", "mcp.json.tairseach-backup.-7", "other.json.tairseach-backup.9"} {
		if err := os.WriteFile(filepath.Join(filepath.Dir(path), other), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if name, err := Backup(path, []byte("d")); err != nil || name != BackupName(path, 4) {
		t.Errorf("after removals: %s, %v; want %s", name, err, BackupName(path, 4))
	}
}

// TestBackupKeepsLast: after many changes, the KeepBackups newest backups
// remain;
// a file, directory or link that only looks like a backup stays, and is
// neither counted nor written through.
func TestBackupKeepsLast(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp.json")
	mine := []string{"mcp.json.tairseach-backup.1", "mcp.json.tairseach-backup.007", "mcp.json.tairseach-backup.+5", "mcp.json.tairseach-backup.2x", "mcp.json.tairseach-backup-2", "mcp.json.tairseach-backup.99.bak"}
	for _, name := range mine {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(BackupName(path, 3), 0o755); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(dir, "outside")
	if err := os.Symlink(outside, BackupName(path, 4)); err != nil {
		t.Fatal(err)
	}
	var made []string
	for i := range 10 {
		name, err := Backup(path, []byte{byte('a' + i)})
		if err != nil {
			t.Fatal(err)
		}
		Prune(path) // the change was made
		made = append(made, name)
	}
	// 1, 2, then 5…12: 3 and 4 are taken.
	if want := BackupName(path, 12); made[9] != want {
		t.Errorf("the last backup is %s, want %s", made[9], want)
	}
	for i, name := range made {
		_, err := os.Stat(name)
		if kept := i >= len(made)-KeepBackups; kept != (err == nil) {
			t.Errorf("%s: kept %v, stat %v", name, kept, err)
		}
	}
	for _, name := range mine {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != name {
			t.Errorf("the user's %s: %q, %v", name, b, err)
		}
	}
	if fi, err := os.Stat(BackupName(path, 3)); err != nil || !fi.IsDir() {
		t.Errorf("the user's directory %s: %v", BackupName(path, 3), err)
	}
	if to, err := os.Readlink(BackupName(path, 4)); err != nil || to != outside {
		t.Errorf("the user's link: %q, %v", to, err)
	}
	if _, err := os.Lstat(outside); err == nil {
		t.Error("a backup was written through the user's link")
	}
}
