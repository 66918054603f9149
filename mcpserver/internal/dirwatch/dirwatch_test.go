package dirwatch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// next is the next look within d, or a failure.
func next(t *testing.T, w *Watch, within time.Duration) Change {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	ch, ok := w.Next(ctx)
	if !ok {
		t.Fatalf("no look within %v", within)
	}
	return ch
}

// none fails if there is a look within d.
func none(t *testing.T, w *Watch, within time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if ch, ok := w.Next(ctx); ok {
		t.Fatalf("a look of an idle directory: %+v", ch)
	}
}

func newWatch(t *testing.T, cfg Config) *Watch {
	t.Helper()
	w, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func fastRetry(t *testing.T) {
	defer func(d time.Duration) { t.Cleanup(func() { retryEvery = d }) }(retryEvery)
	retryEvery = 20 * time.Millisecond
}

// A directory watched is looked through once, then at the files written,
// then through again when files come or go; an idle one is not looked at.
func TestWatch(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "a.log")
	write(t, log, "x\n")
	w := newWatch(t, Config{Dir: dir, Delay: 10 * time.Millisecond})
	if ch := next(t, w, time.Second); !ch.Full {
		t.Fatalf("first look %+v, want full", ch)
	}
	none(t, w, 100*time.Millisecond)

	f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("more\n")
	f.Close()
	if ch := next(t, w, time.Second); ch.Full || len(ch.Files) != 1 || !ch.Files[log] {
		t.Fatalf("after an append %+v, want that file", ch)
	}
	write(t, filepath.Join(dir, "b.log"), "")
	if ch := next(t, w, time.Second); !ch.Full {
		t.Fatalf("after a new file %+v, want full", ch)
	}
	os.Remove(log)
	untilFull(t, w) // the write of b.log may come in a look of its own
}

// untilFull waits for a full look.
func untilFull(t *testing.T, w *Watch) {
	t.Helper()
	for ch := next(t, w, time.Second); !ch.Full; ch = next(t, w, time.Second) {
	}
}

// drain takes the looks due until the directory is idle.
func drain(w *Watch) {
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		_, ok := w.Next(ctx)
		cancel()
		if !ok {
			return
		}
	}
}

// Past MaxFiles files written, the look is of the whole directory.
func TestManyFilesWrittenLookThrough(t *testing.T) {
	dir := t.TempDir()
	for i := range MaxFiles + 1 {
		write(t, filepath.Join(dir, fmt.Sprint(i)), "")
	}
	w := newWatch(t, Config{Dir: dir, Delay: 500 * time.Millisecond})
	next(t, w, 2*time.Second)
	for i := range MaxFiles + 1 {
		write(t, filepath.Join(dir, fmt.Sprint(i)), "x")
	}
	if ch := next(t, w, 2*time.Second); !ch.Full {
		t.Fatalf("%d files written and no full look: %d remembered", MaxFiles+1, len(ch.Files))
	}
}

// A directory not there yet is watched once it is; one removed and made
// again too, each time with a full look.
func TestDirectoryComesAndGoes(t *testing.T) {
	fastRetry(t)
	dir := filepath.Join(t.TempDir(), "logs")
	w := newWatch(t, Config{Dir: dir, Delay: 10 * time.Millisecond})
	none(t, w, 100*time.Millisecond)
	os.Mkdir(dir, 0o700)
	if ch := next(t, w, time.Second); !ch.Full {
		t.Fatalf("once the directory is there %+v, want full", ch)
	}
	os.RemoveAll(dir)
	if ch := next(t, w, time.Second); !ch.Full {
		t.Fatalf("once the directory is gone %+v, want full", ch)
	}
	none(t, w, 100*time.Millisecond)
	os.Mkdir(dir, 0o700)
	if ch := next(t, w, time.Second); !ch.Full {
		t.Fatalf("once the directory is back %+v, want full", ch)
	}
	write(t, filepath.Join(dir, "a.log"), "")
	if ch := next(t, w, time.Second); !ch.Full {
		t.Fatalf("a file of the directory made again is not seen: %+v", ch)
	}
}

// Without Quiet, changes during the wait are taken in the same look: a
// directory written to all the time is still looked at every Delay. With
// Quiet, it is looked at once it has been quiet for Delay.
func TestDelay(t *testing.T) {
	for _, quiet := range []bool{false, true} {
		t.Run(fmt.Sprint("quiet=", quiet), func(t *testing.T) {
			dir := t.TempDir()
			w := newWatch(t, Config{Dir: dir, Delay: 250 * time.Millisecond, Quiet: quiet})
			next(t, w, 2*time.Second)
			stop := make(chan struct{})
			stopped := make(chan time.Time, 1)
			go func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						stopped <- time.Now()
						return
					case <-time.After(10 * time.Millisecond):
						os.WriteFile(filepath.Join(dir, "a.log"), []byte(fmt.Sprint(i)), 0o600)
					}
				}
			}()
			time.AfterFunc(time.Second, func() { close(stop) })
			next(t, w, 3*time.Second)
			select {
			case at := <-stopped:
				if !quiet {
					t.Fatalf("no look while the directory was written to (stopped %v ago)", time.Since(at))
				}
			default:
				if quiet {
					t.Fatal("a look while the directory was written to")
				}
				<-stopped
			}
		})
	}
}

// A directory too large to watch is looked through every Delay, or with
// ByModTime looked at when its modification time changed; once it is small
// again it is watched.
func TestTooLarge(t *testing.T) {
	fastRetry(t)
	large := true
	defer func(f func(string) bool) { tooLarge = f }(tooLarge)
	tooLarge = func(string) bool { return large }

	dir := t.TempDir()
	w := newWatch(t, Config{Dir: dir, Delay: 10 * time.Millisecond})
	for range 3 {
		if ch := next(t, w, time.Second); !ch.Full {
			t.Fatalf("a directory too large to watch: %+v, want looked through", ch)
		}
	}
	large = false
	for !w.watching {
		next(t, w, time.Second)
	}
	drain(w)
	none(t, w, 100*time.Millisecond)

	// Grown too large while watched: looked through every Delay again.
	large = true
	w.Recheck()
	for range 3 {
		if ch := next(t, w, time.Second); !ch.Full {
			t.Fatalf("a directory grown too large: %+v, want looked through", ch)
		}
	}

	large = true
	m := newWatch(t, Config{Dir: dir, Delay: 10 * time.Millisecond, ByModTime: true})
	if ch := next(t, m, time.Second); !ch.Full {
		t.Fatalf("first look %+v", ch)
	}
	none(t, m, 100*time.Millisecond)
	write(t, filepath.Join(dir, "new.md"), "")
	if ch := next(t, m, time.Second); !ch.Full {
		t.Fatalf("after a new file %+v, want full", ch)
	}
}

// Next ends with its context.
func TestNextEndsWithContext(t *testing.T) {
	w := newWatch(t, Config{Dir: t.TempDir(), Delay: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, ok := w.Next(ctx); ok {
		t.Fatal("a look after the context ended")
	}
}
