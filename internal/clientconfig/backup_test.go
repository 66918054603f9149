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
