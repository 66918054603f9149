package watchable

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestTooLarge(t *testing.T) {
	defer func(k bool) { kqueue = k }(kqueue)
	dir := t.TempDir()
	for i := range MaxKqueueFiles {
		os.WriteFile(filepath.Join(dir, fmt.Sprint(i)), nil, 0o600)
	}
	kqueue = true
	if TooLarge(dir) {
		t.Fatalf("%d files are not too many", MaxKqueueFiles)
	}
	os.WriteFile(filepath.Join(dir, "one more"), nil, 0o600)
	if !TooLarge(dir) {
		t.Fatalf("%d files are too many to watch with kqueue", MaxKqueueFiles+1)
	}
	if kqueue = false; TooLarge(dir) {
		t.Fatal("inotify holds one descriptor whatever the files")
	}
}
