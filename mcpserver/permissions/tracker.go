package permissions

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

// Defaults for the zero fields of Options.
const (
	DefaultInterval    = time.Minute
	DefaultReadTimeout = 10 * time.Second
)

// Options configure a Tracker.
type Options struct {
	// Read returns the result of the server's permissions.list. The caller
	// routes it as it routes its other calls. Required.
	Read func(ctx context.Context) (json.RawMessage, error)
	// Interval is the longest time between two reads; 0 means
	// DefaultInterval. macOS tells the app of no change, so a permission
	// granted in System Settings is seen within Interval, or at the next
	// Refresh.
	Interval time.Duration
	// ReadTimeout bounds one read; 0 means DefaultReadTimeout.
	ReadTimeout time.Duration
	// OnChange, if set, is called after a read that changed the Grants,
	// with the Grants before and after; Tracker.Grants already returns
	// now. It runs on the Tracker's goroutine, which reads nothing until it
	// returns; it may call Refresh and Grants but not Close.
	OnChange func(old, now Grants)
	// Logger receives a line when the statuses change or cannot be read.
	// The zero value is silent.
	Logger zerolog.Logger
}

// Tracker keeps the Grants the server reports up to date. It reads them in
// one goroutine of its own, started by Start: at once, when Refresh asks,
// and at least every Options.Interval. A read that fails (the app does not
// answer, the method is not mapped, the result cannot be parsed) leaves
// nothing known, so that nothing is blocked on stale statuses.
//
// The methods of a Tracker may be called concurrently.
type Tracker struct {
	opts Options
	log  zerolog.Logger

	nudge chan struct{} // holds at most one pending Refresh
	first chan struct{} // closed by the goroutine after its first read, or as it returns

	// cur is written by the goroutine only, read by anyone.
	cur atomic.Pointer[Grants]

	mu      sync.Mutex // guards the fields below
	cancel  context.CancelFunc
	done    chan struct{} // closed when the goroutine has returned; nil before Start
	started bool          // Start or Close was called
}

// NewTracker returns a Tracker that knows nothing yet and reads nothing
// until Start.
func NewTracker(opts Options) *Tracker {
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.ReadTimeout <= 0 {
		opts.ReadTimeout = DefaultReadTimeout
	}
	t := &Tracker{opts: opts, log: opts.Logger, nudge: make(chan struct{}, 1), first: make(chan struct{})}
	t.cur.Store(&Grants{})
	return t
}

// Start starts the Tracker's goroutine, which reads the Grants at once and
// then as Options say until ctx is cancelled or Close is called. Only the
// first call starts anything; one after Close does nothing.
func (t *Tracker) Start(ctx context.Context) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.started {
		return
	}
	t.started = true
	ctx, t.cancel = context.WithCancel(ctx)
	t.done = make(chan struct{})
	go t.run(ctx, t.done)
}

// Close stops the goroutine, interrupting a read in progress, and waits
// for it to return. It may be called more than once, and before Start.
func (t *Tracker) Close() error {
	t.mu.Lock()
	t.started = true // a Start after Close does nothing
	cancel, done := t.cancel, t.done
	t.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	return nil
}

// Refresh asks for a read as soon as the goroutine is free. It never
// blocks; requests made before the read starts are served by that one read.
func (t *Tracker) Refresh() {
	select {
	case t.nudge <- struct{}{}:
	default:
	}
}

// FirstRead is closed once the first read has ended, whether it read the
// Grants or failed, and OnChange has returned; also when a Tracker started
// stops before reading. Until then Grants knows nothing because nothing was
// read yet, not because the read failed.
func (t *Tracker) FirstRead() <-chan struct{} { return t.first }

// Grants returns the statuses of the last read; the zero Grants before the
// first, or when the last one failed.
func (t *Tracker) Grants() Grants { return *t.cur.Load() }

// Blocked is Grants().Blocked(perms).
func (t *Tracker) Blocked(perms []string) (perm string, status Status, blocked bool) {
	return t.Grants().Blocked(perms)
}

// run is the Tracker's goroutine; it owns every read and every write of cur.
func (t *Tracker) run(ctx context.Context, done chan struct{}) {
	defer close(done)
	first := t.first // closed once, here
	defer func() {
		if first != nil {
			close(first)
		}
	}()
	timer := time.NewTimer(0) // the first read, at once
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-t.nudge:
		}
		t.read(ctx)
		if ctx.Err() != nil {
			return
		}
		if first != nil {
			close(first)
			first = nil
		}
		// The next read is Interval after this one, whatever caused it.
		// (Since Go 1.23, Reset discards a tick not yet received.)
		timer.Reset(t.opts.Interval)
	}
}

// read reads the Grants once and reports a change.
func (t *Tracker) read(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, t.opts.ReadTimeout)
	raw, err := t.opts.Read(rctx)
	cancel()
	if ctx.Err() != nil {
		return // closing: what was read no longer matters
	}
	var now Grants
	if err == nil {
		var m map[string]Status
		if m, err = Parse(raw); err == nil {
			now = NewGrants(m)
		}
	}
	old := t.Grants()
	if err != nil && old.Known() {
		t.log.Warn().Err(err).Msg("permissions unknown: reading them failed")
	}
	if old.Equal(now) {
		return
	}
	t.cur.Store(&now)
	if err == nil {
		t.log.Info().Stringer("grants", now).Msg("permissions changed")
	}
	if t.opts.OnChange != nil {
		t.opts.OnChange(old, now)
	}
}
