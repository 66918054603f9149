package permissions_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geilt/tairseach-mcp/mcpserver/permissions"
)

// fakeServer answers reads with whatever the test set last.
type fakeServer struct {
	mu  sync.Mutex // guards raw and err
	raw json.RawMessage
	err error

	reads atomic.Int64
	read  chan struct{} // one value per read, if there is room
}

func newFake(raw json.RawMessage) *fakeServer {
	return &fakeServer{raw: raw, read: make(chan struct{}, 100)}
}

func (f *fakeServer) set(raw json.RawMessage, err error) {
	f.mu.Lock()
	f.raw, f.err = raw, err
	f.mu.Unlock()
}

func (f *fakeServer) Read(context.Context) (json.RawMessage, error) {
	f.mu.Lock()
	raw, err := f.raw, f.err
	f.mu.Unlock()
	f.reads.Add(1)
	select {
	case f.read <- struct{}{}:
	default:
	}
	return raw, err
}

type change struct{ old, now permissions.Grants }

// recorder collects OnChange calls.
type recorder chan change

func (r recorder) onChange(old, now permissions.Grants) { r <- change{old, now} }

// next waits for the next change.
func (r recorder) next(t *testing.T) change {
	t.Helper()
	select {
	case c := <-r:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("no change reported within 10s")
	}
	panic("unreachable")
}

func grants(kv ...string) permissions.Grants {
	m := map[string]permissions.Status{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = permissions.Status(kv[i+1])
	}
	return permissions.NewGrants(m)
}

func startTracker(t *testing.T, opts permissions.Options) *permissions.Tracker {
	t.Helper()
	if opts.MinInterval == 0 {
		opts.MinInterval = time.Nanosecond // each Refresh reads, unless a test says
	}
	tr := permissions.NewTracker(opts)
	tr.Start(context.Background())
	t.Cleanup(func() { tr.Close() })
	return tr
}

func TestTrackerChanges(t *testing.T) {
	f := newFake(list("contacts", "granted", "screen_recording", "denied"))
	rec := make(recorder, 10)
	tr := startTracker(t, permissions.Options{Read: f.Read, OnChange: rec.onChange, Interval: time.Hour})

	c := rec.next(t)
	if c.old.Known() || !c.now.Equal(grants("contacts", "granted", "screen_recording", "denied")) {
		t.Fatalf("first change %v -> %v", c.old, c.now)
	}
	if !tr.Grants().Equal(c.now) {
		t.Errorf("Grants() = %v after the change", tr.Grants())
	}
	if p, s, blocked := tr.Blocked([]string{"contacts", "screen_recording"}); !blocked || p != "screen_recording" || s != permissions.Denied {
		t.Errorf("Blocked = %q, %q, %v", p, s, blocked)
	}

	// The same statuses again: no change reported (the next one reported
	// starts from the first).
	tr.Refresh()
	<-f.read
	<-f.read
	f.set(list("contacts", "granted", "screen_recording", "granted"), nil)
	tr.Refresh()
	c = rec.next(t)
	if !c.old.Equal(grants("contacts", "granted", "screen_recording", "denied")) || !c.now.Equal(grants("contacts", "granted", "screen_recording", "granted")) {
		t.Fatalf("change %v -> %v", c.old, c.now)
	}
	if _, _, blocked := tr.Blocked([]string{"screen_recording"}); blocked {
		t.Error("blocked after the grant")
	}

	// A failed read keeps what the last good one read, with its age and
	// the error, and reports no change: what is denied stays left out.
	f.set(list("screen_recording", "denied"), nil)
	tr.Refresh()
	rec.next(t)
	f.set(nil, errors.New("tairseach server unavailable"))
	n := f.reads.Load()
	tr.Refresh()
	for f.reads.Load() == n || tr.State().Err == nil {
		time.Sleep(time.Millisecond)
	}
	if st := tr.State(); !st.Grants.Equal(grants("screen_recording", "denied")) || st.ReadAt.IsZero() || st.Err == nil {
		t.Fatalf("after a failed read: %v read at %v, err %v", st.Grants, st.ReadAt, st.Err)
	}
	if _, _, blocked := tr.Blocked([]string{"screen_recording"}); !blocked {
		t.Error("not blocked after a failed read: the last grants known were forgotten")
	}
	// A result that is not a list is a failed read too; the next good one
	// is compared with the last good one.
	f.set(json.RawMessage(`{"status":"ok"}`), nil)
	tr.Refresh()
	f.set(list("camera", "not_determined"), nil)
	tr.Refresh()
	c = rec.next(t)
	if !c.old.Equal(grants("screen_recording", "denied")) || !c.now.Equal(grants("camera", "not_determined")) {
		t.Fatalf("change %v -> %v", c.old, c.now)
	}
	if st := tr.State(); st.Err != nil {
		t.Errorf("State().Err = %v after a good read", st.Err)
	}
	// Nothing to read them from (no manifest maps the method): forgotten.
	f.set(nil, fmt.Errorf("no manifest maps permissions.list: %w", permissions.ErrNoSource))
	tr.Refresh()
	c = rec.next(t)
	if c.now.Known() || tr.Grants().Known() || !tr.State().ReadAt.IsZero() {
		t.Fatalf("change %v -> %v with no source", c.old, c.now)
	}
	select {
	case c := <-rec:
		t.Errorf("extra change %v -> %v", c.old, c.now)
	default:
	}
}

// TestTrackerInterval: with no Refresh, the tracker reads every Interval.
func TestTrackerInterval(t *testing.T) {
	f := newFake(list("contacts", "granted"))
	startTracker(t, permissions.Options{Read: f.Read, Interval: 5 * time.Millisecond})
	for range 4 {
		select {
		case <-f.read:
		case <-time.After(10 * time.Second):
			t.Fatalf("%d reads in 10s with a 5ms interval", f.reads.Load())
		}
	}
}

// TestTrackerRefreshCoalesced: Refreshes made while a read runs give one
// more read, not one each.
func TestTrackerRefreshCoalesced(t *testing.T) {
	started := make(chan struct{}, 10)
	release := make(chan struct{})
	read := func(ctx context.Context) (json.RawMessage, error) {
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return list("contacts", "granted"), nil
	}
	tr := startTracker(t, permissions.Options{Read: read, Interval: time.Hour})
	<-started // the first read, at Start
	for range 100 {
		tr.Refresh() // never blocks
	}
	release <- struct{}{}
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("no read after Refresh")
	}
	release <- struct{}{}
	select {
	case <-started:
		t.Error("a third read: the Refreshes were not coalesced")
	case <-time.After(50 * time.Millisecond):
	}
}

// TestTrackerReadTimeout: a read that hangs is given up, and keeps what
// was known.
func TestTrackerReadTimeout(t *testing.T) {
	var hang atomic.Bool
	read := func(ctx context.Context) (json.RawMessage, error) {
		if hang.Load() {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return list("camera", "denied"), nil
	}
	rec := make(recorder, 10)
	tr := startTracker(t, permissions.Options{Read: read, OnChange: rec.onChange, Interval: time.Hour, ReadTimeout: 20 * time.Millisecond})
	rec.next(t)
	hang.Store(true)
	tr.Refresh()
	for !errors.Is(tr.State().Err, context.DeadlineExceeded) {
		time.Sleep(time.Millisecond)
	}
	if g := tr.Grants(); g.Status("camera") != permissions.Denied {
		t.Errorf("after a timed out read: %v", g)
	}
	select {
	case c := <-rec:
		t.Errorf("a change reported for a timed out read: %v -> %v", c.old, c.now)
	default:
	}
}

// TestTrackerMinInterval: however many Refresh ask, reads start no sooner
// than MinInterval after the last; those asked meanwhile are one read.
func TestTrackerMinInterval(t *testing.T) {
	f := newFake(list("contacts", "granted"))
	tr := startTracker(t, permissions.Options{Read: f.Read, Interval: time.Hour, MinInterval: time.Hour})
	<-f.read
	for range 1000 {
		tr.Refresh()
	}
	time.Sleep(50 * time.Millisecond)
	if n := f.reads.Load(); n != 1 {
		t.Fatalf("%d reads after 1,000 Refresh within MinInterval, want 1", n)
	}

	f = newFake(list("contacts", "granted"))
	// MinInterval is long beside the Refresh loop (about a millisecond),
	// so that no Refresh falls after the read they asked for has started,
	// and beside the look for a third read after it.
	tr = startTracker(t, permissions.Options{Read: f.Read, Interval: time.Hour, MinInterval: 300 * time.Millisecond})
	<-f.read
	for range 1000 {
		tr.Refresh()
	}
	<-f.read // the one read they asked for, once MinInterval has passed
	time.Sleep(60 * time.Millisecond)
	if n := f.reads.Load(); n != 2 {
		t.Fatalf("%d reads after 1,000 Refresh, want 2", n)
	}
}

// TestTrackerOneReadAtATime: Read and the goroutine never read at once;
// a Read that finds a read in flight takes its result.
func TestTrackerOneReadAtATime(t *testing.T) {
	var now, most atomic.Int32
	read := func(context.Context) (json.RawMessage, error) {
		n := now.Add(1)
		defer now.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(time.Millisecond)
		return list("contacts", "granted"), nil
	}
	tr := startTracker(t, permissions.Options{Read: read, Interval: time.Millisecond})
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			for range 5 {
				tr.Refresh()
				if st := tr.Read(context.Background()); st.Grants.Status("contacts") != permissions.Granted {
					t.Errorf("Read: %v", st.Grants)
				}
			}
		})
	}
	wg.Wait()
	if m := most.Load(); m != 1 {
		t.Errorf("%d reads at once, want 1", m)
	}
}

// TestTrackerStop: Close interrupts a read in progress and waits for the
// goroutine; cancelling Start's context stops it too.
func TestTrackerStop(t *testing.T) {
	t.Run("close", func(t *testing.T) {
		inRead := make(chan struct{})
		var returned atomic.Bool
		read := func(ctx context.Context) (json.RawMessage, error) {
			close(inRead)
			<-ctx.Done()
			time.Sleep(10 * time.Millisecond) // Close must wait for this
			returned.Store(true)
			return nil, ctx.Err()
		}
		tr := permissions.NewTracker(permissions.Options{Read: read, OnChange: func(_, _ permissions.Grants) { t.Error("change reported while closing") }})
		tr.Start(context.Background())
		<-inRead
		tr.Close()
		if !returned.Load() {
			t.Error("Close returned before the read did")
		}
		tr.Close() // again
		tr.Refresh()
	})
	t.Run("cancel", func(t *testing.T) {
		f := newFake(list("contacts", "granted"))
		ctx, cancel := context.WithCancel(context.Background())
		tr := permissions.NewTracker(permissions.Options{Read: f.Read, Interval: time.Millisecond})
		tr.Start(ctx)
		<-f.read
		cancel()
		tr.Close()
		n := f.reads.Load()
		time.Sleep(20 * time.Millisecond)
		if f.reads.Load() != n {
			t.Error("reads after the context was cancelled")
		}
	})
	t.Run("close before start", func(t *testing.T) {
		f := newFake(list("contacts", "granted"))
		tr := permissions.NewTracker(permissions.Options{Read: f.Read})
		tr.Close()
		tr.Start(context.Background())
		tr.Refresh()
		time.Sleep(20 * time.Millisecond)
		if f.reads.Load() != 0 || tr.Grants().Known() {
			t.Error("a closed Tracker read")
		}
	})
}

// FirstRead is closed after the first read, failed or not, once OnChange
// has returned; and when the Tracker stops before it reads.
func TestTrackerFirstRead(t *testing.T) {
	for _, fail := range []bool{false, true} {
		f := newFake(json.RawMessage(`{"permissions":[{"permission":"camera","status":"denied","granted":false}]}`))
		if fail {
			f.set(nil, errors.New("no app"))
		}
		release := make(chan struct{})
		tr := permissions.NewTracker(permissions.Options{Read: func(ctx context.Context) (json.RawMessage, error) {
			<-release
			return f.Read(ctx)
		}, OnChange: func(_, now permissions.Grants) {
			if now.Status("camera") != permissions.Denied {
				t.Errorf("OnChange with %v", now)
			}
		}})
		tr.Start(context.Background())
		select {
		case <-tr.FirstRead():
			t.Fatal("FirstRead closed before the first read ended")
		case <-time.After(20 * time.Millisecond):
		}
		close(release)
		select {
		case <-tr.FirstRead():
		case <-time.After(10 * time.Second):
			t.Fatalf("fail=%v: FirstRead not closed after the first read", fail)
		}
		if got := tr.Grants().Known(); got == fail {
			t.Errorf("fail=%v: Grants known = %v after FirstRead", fail, got)
		}
		tr.Refresh() // later reads close nothing twice
		tr.Close()
	}

	tr := permissions.NewTracker(permissions.Options{Read: func(ctx context.Context) (json.RawMessage, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}})
	tr.Start(context.Background())
	tr.Close()
	select {
	case <-tr.FirstRead():
	default:
		t.Fatal("FirstRead not closed by Close before any read ended")
	}
}
