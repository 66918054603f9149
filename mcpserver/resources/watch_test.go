package resources

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// manyLogs makes a log directory of n files.
func manyLogs(tb testing.TB, n int) string {
	tb.Helper()
	dir := tb.TempDir()
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%06d.log", i)), []byte("x\n"), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}

// BenchmarkScanLogs looks through a log directory of 50,000 files, which
// a real one (a few rotated logs) is not within a hundred times of: the
// directory is read in chunks and only the files served are kept.
func BenchmarkScanLogs(b *testing.B) {
	s := &Set{cfg: Config{LogsDir: manyLogs(b, 50_000)}}
	b.ReportAllocs()
	for b.Loop() {
		if got := s.scanLogs(); len(got) != MaxLogFiles {
			b.Fatalf("%d files served, want %d", len(got), MaxLogFiles)
		}
	}
}

// An idle log directory is not looked through: the watch waits for change
// events. It used to be read whole every Poll, which kept a core busy for a
// directory of many files.
func TestIdleLogDirectoryIsNotLookedAt(t *testing.T) {
	dir := manyLogs(t, 600)
	s := New(Config{LogsDir: dir, Poll: 5 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	// New looks once, and Run once more as its watch starts.
	waitFor(t, "the first look", func() bool { return s.scans.Load() >= 2 })
	time.Sleep(100 * 5 * time.Millisecond) // a hundred polls of old
	if n := s.scans.Load(); n != 2 {
		t.Fatalf("the idle directory was looked through %d times, want none after the watch started", n-2)
	}
	// An append is a look at that file alone; a new file, at the directory.
	var served string
	for p := range s.files() {
		served = p
		break
	}
	f, err := os.OpenFile(served, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("more\n")
	f.Close()
	waitFor(t, "the append seen", func() bool { return s.files()[served].size == 7 })
	if n := s.scans.Load(); n != 2 {
		t.Fatalf("an append made %d looks through the directory, want none", n-2)
	}
	os.WriteFile(filepath.Join(dir, "new.log"), nil, 0o600)
	waitFor(t, "the new file seen", func() bool { return s.scans.Load() == 3 })
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 5s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
