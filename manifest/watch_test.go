package manifest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// deadline bounds every wait; reloads normally take about one debounce period.
const deadline = 5 * time.Second

// watchHarness runs a Watcher over a temporary directory and records its reloads.
type watchHarness struct {
	t   *testing.T
	dir string
	w   *Watcher

	mu      sync.Mutex
	reloads []Reload
}

// startWatcher runs a Watcher on dir until the test ends and waits until it
// watches the directory.
func startWatcher(t *testing.T, dir string, opts WatchOptions) *watchHarness {
	t.Helper()
	h := &watchHarness{t: t, dir: dir}
	w, err := NewWatcher(dir, opts, func(r Reload) {
		h.mu.Lock()
		h.reloads = append(h.reloads, r)
		h.mu.Unlock()
	})
	if err != nil {
		t.Fatalf("NewWatcher: %v", err)
	}
	h.w = w
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(deadline):
			t.Errorf("Run did not return after cancellation")
		}
	})
	h.waitApplies(1) // Run's first rescan: the tree is watched from now on
	return h
}

// poll calls cond until it is true, failing the test after the deadline.
func poll(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(deadline); !cond(); {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitTools waits until the current tools are exactly names.
func (h *watchHarness) waitTools(names ...string) {
	h.t.Helper()
	var got []string
	for end := time.Now().Add(deadline); ; time.Sleep(5 * time.Millisecond) {
		got = toolNames(h.w.Registry())
		if slices.Equal(got, names) {
			return
		}
		if time.Now().After(end) {
			h.t.Fatalf("tools = %q, want %q", got, names)
		}
	}
}

// waitApplies waits until the watcher has attempted n reloads in all.
func (h *watchHarness) waitApplies(n int64) {
	h.t.Helper()
	poll(h.t, fmt.Sprintf("%d reloads", n), func() bool { return h.w.applies.Load() >= n })
}

// quiet waits for the next reload attempt and a little more, then fails if
// onReload was called after the first since reloads.
func (h *watchHarness) quiet(since int) {
	h.t.Helper()
	h.waitApplies(h.w.applies.Load() + 1)
	time.Sleep(2 * h.w.opts.debounce())
	if got := h.since(since); len(got) != 0 {
		h.t.Fatalf("got %d reloads, want none: %+v", len(got), got)
	}
}

func (h *watchHarness) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.reloads)
}

// since returns the reloads after the first n.
func (h *watchHarness) since(n int) []Reload {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.reloads[n:])
}

func toolNames(r *Registry) []string {
	names := []string{}
	for _, t := range r.Tools {
		names = append(names, t.Name)
	}
	return names
}

// tool returns a manifest with one tool named name.
func tool(name string) string { return manifestJSONFor(name, "", name+"="+name) }

func write(t *testing.T, name, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestWatchEdits(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	writeTree(t, dir, map[string]string{"a.json": tool("a")})
	h := startWatcher(t, dir, WatchOptions{})
	h.waitTools("a")
	p := func(rel string) string { return filepath.Join(dir, filepath.FromSlash(rel)) }

	steps := []struct {
		name             string
		do               func()
		tools            []string
		changed, removed []string
	}{
		{
			name:    "new file",
			do:      func() { write(t, p("b.json"), tool("b")) },
			tools:   []string{"a", "b"},
			changed: []string{"b.json"},
		},
		{
			name:    "modify",
			do:      func() { write(t, p("a.json"), manifestJSONFor("a", "", "a=a", "a2=a2")) },
			tools:   []string{"a", "a2", "b"},
			changed: []string{"a.json"},
		},
		{
			name: "atomic save by rename",
			do: func() {
				write(t, p("a.json.tmp"), tool("a3"))
				must(t, os.Rename(p("a.json.tmp"), p("a.json")))
			},
			tools:   []string{"a3", "b"},
			changed: []string{"a.json"},
		},
		{
			name: "write then chmod",
			do: func() {
				write(t, p("b.json"), tool("b2"))
				must(t, os.Chmod(p("b.json"), 0o600))
			},
			tools:   []string{"a3", "b2"},
			changed: []string{"b.json"},
		},
		{
			name:    "delete",
			do:      func() { must(t, os.Remove(p("b.json"))) },
			tools:   []string{"a3"},
			removed: []string{"b.json"},
		},
		{
			name:    "new directory",
			do:      func() { write(t, p("sub/deep/er/c.json"), tool("c")) },
			tools:   []string{"a3", "c"},
			changed: []string{"sub/deep/er/c.json"},
		},
		{
			name:    "file in the new directory",
			do:      func() { write(t, p("sub/deep/er/d.json"), tool("d")) },
			tools:   []string{"a3", "c", "d"},
			changed: []string{"sub/deep/er/d.json"},
		},
		{
			name: "directory moved in",
			do: func() {
				writeTree(t, outside, map[string]string{"pkg/e.json": tool("e"), "pkg/f/g.json": tool("g"), "pkg/f/.hidden.json": tool("h")})
				must(t, os.Rename(filepath.Join(outside, "pkg"), p("pkg")))
			},
			tools:   []string{"a3", "c", "d", "e", "g"},
			changed: []string{"pkg/e.json", "pkg/f/g.json"},
		},
		{
			name:    "directory renamed",
			do:      func() { must(t, os.Rename(p("pkg"), p("pkg2"))) },
			tools:   []string{"a3", "c", "d", "e", "g"},
			changed: []string{"pkg2/e.json", "pkg2/f/g.json"},
			removed: []string{"pkg/e.json", "pkg/f/g.json"},
		},
		{
			name:    "file in the renamed directory",
			do:      func() { write(t, p("pkg2/f/i.json"), tool("i")) },
			tools:   []string{"a3", "c", "d", "e", "g", "i"},
			changed: []string{"pkg2/f/i.json"},
		},
		{
			name:    "directory moved out",
			do:      func() { must(t, os.Rename(p("pkg2"), filepath.Join(outside, "pkg2"))) },
			tools:   []string{"a3", "c", "d"},
			removed: []string{"pkg2/e.json", "pkg2/f/g.json", "pkg2/f/i.json"},
		},
		{
			name:    "directory deleted",
			do:      func() { must(t, os.RemoveAll(p("sub"))) },
			tools:   []string{"a3"},
			removed: []string{"sub/deep/er/c.json", "sub/deep/er/d.json"},
		},
		{
			name: "editor files are ignored",
			do: func() {
				writeTree(t, dir, map[string]string{".a.json.swp": "x", "a.json~": "x", "4913": "", "j.json": tool("j")})
			},
			tools:   []string{"a3", "j"},
			changed: []string{"j.json"},
		},
	}
	for _, st := range steps {
		n := h.count()
		st.do()
		poll(t, st.name, func() bool { return h.count() > n })
		h.waitTools(st.tools...)
		var changed, removed []string
		for _, r := range h.since(n) {
			changed = append(changed, r.Changed...)
			removed = append(removed, r.Removed...)
			if len(r.Failed) != 0 || !r.ToolsChanged || r.Full {
				t.Errorf("%s: reload %+v, want no failures, tools changed, not full", st.name, r)
			}
		}
		slices.Sort(changed)
		slices.Sort(removed)
		if !slices.Equal(changed, st.changed) || !slices.Equal(removed, st.removed) {
			t.Errorf("%s: changed %q, removed %q; want %q, %q", st.name, changed, removed, st.changed, st.removed)
		}
	}

	// A file moved out of the tree no longer reaches it through a stale watch.
	n := h.count()
	write(t, filepath.Join(outside, "pkg2", "f", "k.json"), tool("k"))
	write(t, p("l.json"), tool("l"))
	h.waitTools("a3", "j", "l")
	for _, r := range h.since(n) {
		if !slices.Equal(r.Changed, []string{"l.json"}) || len(r.Removed) != 0 {
			t.Errorf("reload %+v, want only l.json changed", r)
		}
	}
}

func TestWatchUnchanged(t *testing.T) {
	dir := t.TempDir()
	data := tool("a")
	writeTree(t, dir, map[string]string{"a.json": data, "bad.json": "{}"})
	h := startWatcher(t, dir, WatchOptions{})
	a := filepath.Join(dir, "a.json")

	write(t, a, data) // the same bytes
	h.quiet(0)
	later := time.Now().Add(time.Hour)
	must(t, os.Chtimes(a, later, later))
	must(t, os.Chmod(a, 0o600))
	write(t, filepath.Join(dir, "bad.json"), "{}")
	h.quiet(0)
	must(t, os.Mkdir(filepath.Join(dir, "empty"), 0o755))
	write(t, filepath.Join(dir, "notes.txt"), "not a manifest")
	h.quiet(0)
}
