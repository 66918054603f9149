package manifest

// Tests of the watcher under change: broken edits, directories that come late
// or are made again, a re-pointed symlink, bursts, reloads on demand, and
// how it starts and stops.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/rs/zerolog"
)

func TestWatchBrokenEdits(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.json": tool("a")})
	var logs syncBuffer
	h := startWatcher(t, dir, WatchOptions{Options: Options{Logger: zerolog.New(&logs)}})
	a := filepath.Join(dir, "a.json")

	// waitReload waits for the next reload after the first n.
	waitReload := func(n int) Reload {
		t.Helper()
		poll(t, "a reload", func() bool { return h.count() > n })
		return h.since(n)[0]
	}
	checkErrs := func(want ...string) {
		t.Helper()
		var got []string
		for _, fe := range h.w.Registry().FileErrors {
			got = append(got, fe.Error())
		}
		if !slices.Equal(got, want) {
			t.Errorf("FileErrors = %q, want %q", got, want)
		}
	}
	const missingTools = `a.json: missing "tools" array`

	// A broken edit keeps the last good tools and is reported.
	n := h.count()
	write(t, a, `{"id":"a"}`)
	r := waitReload(n)
	if len(r.Failed) != 1 || r.Failed[0].Error() != missingTools || r.ToolsChanged || len(r.Changed)+len(r.Removed) != 0 {
		t.Errorf("broken edit: reload %+v, want a.json failing only", r)
	}
	if got := toolNames(r.Registry); !slices.Equal(got, []string{"a"}) || !slices.Equal(r.Registry.Files, []string{"a.json"}) {
		t.Errorf("broken edit: tools %q, files %q; want the last good a.json", got, r.Registry.Files)
	}
	checkErrs(missingTools)

	// The same error again, from other bytes, is not reported again.
	n = h.count()
	write(t, a, `{"id":"b"}`)
	h.quiet(n)

	// Another error is.
	write(t, a, `{"tools":{}}`)
	r = waitReload(n)
	if len(r.Failed) != 1 || !strings.Contains(r.Failed[0].Error(), "tools: got object, want array") {
		t.Errorf("other error: reload %+v", r)
	}

	// A file broken from the start contributes nothing and is reported.
	n = h.count()
	write(t, filepath.Join(dir, "new.json"), "nope")
	r = waitReload(n)
	if len(r.Failed) != 1 || r.Failed[0].Path != "new.json" || !slices.Equal(r.Registry.Files, []string{"a.json"}) {
		t.Errorf("new broken file: reload %+v, files %q", r, r.Registry.Files)
	}

	// Fixing a file clears its error.
	n = h.count()
	write(t, a, tool("a2"))
	h.waitTools("a2")
	r = waitReload(n)
	if !slices.Equal(r.Changed, []string{"a.json"}) || len(r.Failed) != 0 || !r.ToolsChanged {
		t.Errorf("fix: reload %+v", r)
	}
	checkErrs("new.json:1:2: invalid JSON: invalid character 'o' in literal null (expecting 'u')")

	// Deleting a broken file clears its error.
	n = h.count()
	must(t, os.Remove(filepath.Join(dir, "new.json")))
	r = waitReload(n)
	if !slices.Equal(r.Removed, []string{"new.json"}) || r.ToolsChanged {
		t.Errorf("delete: reload %+v", r)
	}
	checkErrs()

	// Every error was logged once, every reload once.
	out := logs.String()
	for _, want := range []struct {
		text string
		n    int
	}{
		{`"file":"a.json","message":"manifest rejected"`, 2},
		{`"file":"new.json","message":"manifest rejected"`, 1},
		{`"message":"manifests reloaded"`, h.count()},
		{`"message":"manifests loaded"`, 1},
	} {
		if got := strings.Count(out, want.text); got != want.n {
			t.Errorf("log has %s %d times, want %d:\n%s", want.text, got, want.n, out)
		}
	}
}

// syncBuffer is a strings.Builder safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func TestWatchDirectoryLate(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "x", "y", "manifests")
	h := startWatcher(t, dir, WatchOptions{})
	if r := h.w.Registry(); len(r.Tools) != 0 || len(r.Files) != 0 {
		t.Fatalf("registry of a missing directory: %+v", r)
	}
	write(t, filepath.Join(dir, "core", "a.json"), tool("a"))
	h.waitTools("a")
	write(t, filepath.Join(dir, "core", "b.json"), tool("b"))
	h.waitTools("a", "b")
	if r := h.since(0)[0]; !r.Full || !slices.Equal(r.Changed, []string{"core/a.json"}) {
		t.Errorf("first reload %+v, want a full one with core/a.json", r)
	}
}

func TestWatchDirectoryRecreated(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "manifests")
	writeTree(t, dir, map[string]string{"a.json": tool("a"), "sub/b.json": tool("b")})
	h := startWatcher(t, dir, WatchOptions{})
	h.waitTools("a", "b")

	must(t, os.RemoveAll(dir))
	h.waitTools()
	write(t, filepath.Join(dir, "c.json"), tool("c"))
	h.waitTools("c")

	// Faster than the debounce period.
	must(t, os.RemoveAll(dir))
	write(t, filepath.Join(dir, "sub", "d.json"), tool("d"))
	h.waitTools("d")
	write(t, filepath.Join(dir, "sub", "e.json"), tool("e"))
	h.waitTools("d", "e")

	// Moved away and replaced.
	must(t, os.Rename(dir, filepath.Join(parent, "old")))
	write(t, filepath.Join(dir, "f.json"), tool("f"))
	h.waitTools("f")
	write(t, filepath.Join(parent, "old", "sub", "g.json"), tool("g"))
	write(t, filepath.Join(dir, "h.json"), tool("h"))
	h.waitTools("f", "h")
}

// TestWatchSymlinkedDirectoryRepointed: the manifests directory is a
// symbolic link, pointed elsewhere (ln -sfn) and then renamed away; the
// watch on the link follows its target, so only the parent sees this.
func TestWatchSymlinkedDirectoryRepointed(t *testing.T) {
	parent := t.TempDir()
	one, two := filepath.Join(parent, "one"), filepath.Join(parent, "two")
	writeTree(t, one, map[string]string{"a.json": tool("a")})
	writeTree(t, two, map[string]string{"b.json": tool("b")})
	dir := filepath.Join(parent, "manifests")
	symlink(t, one, dir)
	h := startWatcher(t, dir, WatchOptions{})
	h.waitTools("a")

	// ln -sfn two manifests: a new link renamed over the old one.
	symlink(t, two, filepath.Join(parent, ".tmp-link"))
	must(t, os.Rename(filepath.Join(parent, ".tmp-link"), dir))
	h.waitTools("b")

	must(t, os.Rename(dir, filepath.Join(parent, "gone")))
	h.waitTools()
	symlink(t, one, dir)
	h.waitTools("a")
}

func TestWatchBurst(t *testing.T) {
	dir := t.TempDir()
	// Files go into new directories too, which must be watched before the
	// reload for the burst to keep the debounce timer going. A longer period
	// than the default keeps one reload when a busy machine stalls the writer.
	h := startWatcher(t, dir, WatchOptions{Debounce: 250 * time.Millisecond})
	const n = 500
	want := make([]string, n)
	for i := range n {
		name := fmt.Sprintf("t%03d", i)
		want[i] = name
		write(t, filepath.Join(dir, fmt.Sprintf("g%d", i%5), name+".json"), tool(name))
	}
	h.waitTools(want...)
	time.Sleep(2 * h.w.opts.debounce()) // room for a wrong second reload
	if got := h.since(0); len(got) != 1 || len(got[0].Changed) != n {
		t.Errorf("got %d reloads, want 1 with %d files", len(got), n)
		for _, r := range got {
			t.Logf("reload: %d changed, %d removed, %d failed", len(r.Changed), len(r.Removed), len(r.Failed))
		}
	}
}

func TestWatchReloadOnDemand(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	writeTree(t, dir, map[string]string{"a.json": tool("a")})
	// A change through a hard link outside the tree raises no event in it,
	// as on a file system without notifications.
	link := filepath.Join(outside, "a.json")
	if err := os.Link(filepath.Join(dir, "a.json"), link); err != nil {
		t.Skipf("hard links unavailable: %v", err)
	}
	h := startWatcher(t, dir, WatchOptions{Debounce: 20 * time.Millisecond})
	f, err := os.OpenFile(link, os.O_WRONLY|os.O_TRUNC, 0)
	must(t, err)
	_, err = f.WriteString(tool("b"))
	must(t, errors.Join(err, f.Close()))
	time.Sleep(100 * time.Millisecond)
	if h.count() != 0 {
		t.Skip("this file system reports changes through hard links")
	}
	h.w.Reload()
	h.waitTools("b")
	if r := h.since(0)[0]; !r.Full || !slices.Equal(r.Changed, []string{"a.json"}) {
		t.Errorf("reload %+v, want a full one with a.json", r)
	}
	h.w.Reload() // nothing changed
	h.quiet(1)
}

func TestWatchRunStops(t *testing.T) {
	before := runtime.NumGoroutine()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.json": tool("a")})
	w, err := NewWatcher(dir, WatchOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	poll(t, "the first rescan", func() bool { return w.applies.Load() >= 1 })
	write(t, filepath.Join(dir, "b.json"), tool("b"))
	w.Reload() // a reload pending at cancellation
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(deadline):
		t.Fatal("Run did not return after cancellation")
	}
	poll(t, "goroutines to stop", func() bool { return runtime.NumGoroutine() <= before })

	if err := w.Run(context.Background()); err == nil {
		t.Error("a second Run succeeded")
	}
	w.Reload() // harmless after Run
}

func TestNewWatcher(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"a.json":     tool("a"),
		"bad.json":   "{}",
		"sub/b.json": manifestJSONFor("b", "", "a=a"),
	})
	w, err := NewWatcher(dir, WatchOptions{Options: Options{Prefix: "p_"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Load(dir, Options{Prefix: "p_"})
	if err != nil {
		t.Fatal(err)
	}
	got := w.Registry()
	if !slices.Equal(toolNames(got), toolNames(want)) || !slices.Equal(got.Files, want.Files) ||
		len(got.Skipped) != len(want.Skipped) || len(got.FileErrors) != 1 || got.FileErrors[0].Error() != want.FileErrors[0].Error() {
		t.Errorf("NewWatcher registry:\n%+v\nwant as Load:\n%+v", got, want)
	}
	if _, err := NewWatcher("", WatchOptions{}, nil); err == nil {
		t.Error("NewWatcher with no directory succeeded")
	}
}

func TestWithin(t *testing.T) {
	tests := []struct {
		name, dir string
		want      bool
	}{
		{"/a/b", "/a/b", true},
		{"/a/b/c", "/a/b", true},
		{"/a/bc", "/a/b", false},
		{"/a", "/a/b", false},
		{"/a", "/", true},
		{"/", "/", true},
	}
	for _, tt := range tests {
		if got := within(tt.name, tt.dir); got != tt.want {
			t.Errorf("within(%q, %q) = %v, want %v", tt.name, tt.dir, got, tt.want)
		}
	}
}

// BenchmarkReload1000 measures reloading a tree of 1,000 manifests in 10
// directories, watched, after one file changed: by its event, and by a full
// rescan that re-reads every file.
func BenchmarkReload1000(b *testing.B) {
	dir := b.TempDir()
	for i := range 1000 {
		name := fmt.Sprintf("m%04d", i)
		p := filepath.Join(dir, fmt.Sprintf("d%d", i%10), name+".json")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		data := manifestJSONFor(name, "", name+".list="+name+".list", name+".get="+name+".get")
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for range fsw.Events {
		}
	})
	defer func() { fsw.Close(); wg.Wait() }()
	t := newTree(dir, Options{Prefix: "tairseach_"})
	t.fsw = fsw
	if _, ok := t.apply(nil, true); !ok || len(t.reg.Tools) != 2000 {
		b.Fatalf("loaded %d tools, want 2000", len(t.reg.Tools))
	}
	target := filepath.Join(dir, "d0", "m0000.json")
	gen := 0 // every write differs, across the sub-benchmarks too
	for _, bm := range []struct {
		name  string
		names []string
		full  bool
	}{
		{"one-file", []string{target}, false},
		{"full-rescan", nil, true},
	} {
		b.Run(bm.name, func(b *testing.B) {
			for b.Loop() {
				gen++
				data := manifestJSONFor("m0000", "", fmt.Sprintf("v%d=v", gen))
				if err := os.WriteFile(target, []byte(data), 0o644); err != nil {
					b.Fatal(err)
				}
				if rep, ok := t.apply(bm.names, bm.full); !ok || len(rep.Changed) != 1 {
					b.Fatalf("reload %+v, want one file changed", rep)
				}
			}
		})
	}
}
