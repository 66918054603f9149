package permissions

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

// Defaults for the zero fields of Options.
const (
	DefaultInterval    = time.Minute
	DefaultMinInterval = 2 * time.Second
	DefaultReadTimeout = 10 * time.Second
)

// ErrNoSource is what a Read returns, wrapped, when there is nothing to
// read the Grants from (no manifest maps the method): unlike a read that
// failed, it forgets the Grants known.
var ErrNoSource = errors.New("nothing to read the macOS permissions from")

// Options configure a Tracker.
type Options struct {
	// Read returns the result of the server's permissions.list. The caller
	// routes it as it routes its other calls, but on a way to the socket
	// of its own: a Tracker reads at most once at a time, and a read that
	// waits behind busy calls is a read that times out. Required.
	Read func(ctx context.Context) (json.RawMessage, error)
	// Interval is the longest time between two reads; 0 means
	// DefaultInterval. macOS tells the app of no change, so a permission
	// granted in System Settings is seen within Interval, or at the next
	// Refresh.
	Interval time.Duration
	// MinInterval is the shortest time between the starts of two reads,
	// however many Refresh ask for one (a refusal each, a burst of new
	// header selections); 0 means DefaultMinInterval, and it is at most
	// Interval. OnChange is therefore called at most once per MinInterval:
	// it is the settle period of the changes clients are told of.
	MinInterval time.Duration
	// ReadTimeout bounds one read; 0 means DefaultReadTimeout.
	ReadTimeout time.Duration
	// OnChange, if set, is called after a read that changed the Grants,
	// with the Grants before and after; Tracker.Grants already returns
	// now. It runs on the goroutine that read, which reads nothing more
	// until it returns; it may call Refresh, Grants and State but not
	// Close or Read.
	OnChange func(old, now Grants)
	// Logger receives a line when the statuses change or cannot be read.
	// The zero value is silent.
	Logger zerolog.Logger
}

// State is what a Tracker knows.
type State struct {
	// Grants are the statuses of the last read that succeeded; the zero
	// Grants before one, or after a read found ErrNoSource.
	Grants Grants
	// ReadAt is when Grants were read; zero with them.
	ReadAt time.Time
	// Err is why the latest read failed, nil when it did not: Grants are
	// then as old as ReadAt says.
	Err error
}

// Age is how long ago the Grants were read; 0 when nothing is known.
func (s State) Age() time.Duration {
	if s.ReadAt.IsZero() {
		return 0
	}
	return time.Since(s.ReadAt)
}

// Tracker keeps the Grants the server reports up to date. It reads them in
// one goroutine of its own, started by Start: at once, when Refresh asks
// (no sooner than Options.MinInterval after the last read), and at least
// every Options.Interval. One read at a time, whoever asks: Read, for a
// process that does not track, waits for a read in flight rather than
// starting another. A read that fails (the app does not answer, the
// result cannot be parsed) keeps the Grants of the last one that did not,
// with their age: a tool denied stays left out while the app is busy.
//
// The methods of a Tracker may be called concurrently.
type Tracker struct {
	opts Options
	log  zerolog.Logger

	nudge chan struct{} // holds at most one pending Refresh
	first chan struct{} // closed after the first read, or as the goroutine returns

	// readMu is held by the one read in flight; reads counts the reads
	// ended. cur is written under readMu, read by anyone.
	readMu sync.Mutex
	reads  atomic.Uint64
	cur    atomic.Pointer[State]

	mu        sync.Mutex // guards the fields below
	cancel    context.CancelFunc
	done      chan struct{} // closed when the goroutine has returned; nil before Start
	started   bool          // Start or Close was called
	firstOnce sync.Once
}

// NewTracker returns a Tracker that knows nothing yet and reads nothing
// until Start or Read.
func NewTracker(opts Options) *Tracker {
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.MinInterval <= 0 {
		opts.MinInterval = DefaultMinInterval
	}
	opts.MinInterval = min(opts.MinInterval, opts.Interval)
	if opts.ReadTimeout <= 0 {
		opts.ReadTimeout = DefaultReadTimeout
	}
	t := &Tracker{opts: opts, log: opts.Logger, nudge: make(chan struct{}, 1), first: make(chan struct{})}
	t.cur.Store(&State{})
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

// Refresh asks for a read as soon as the goroutine is free and
// Options.MinInterval has passed since the last read. It never blocks;
// requests made before the read starts are served by that one read.
func (t *Tracker) Refresh() {
	select {
	case t.nudge <- struct{}{}:
	default:
	}
}

// Read reads the Grants now, on the caller's goroutine, for a process that
// reads them once (a command); if a read is in flight, it waits for that
// one and returns what it found instead. It returns the State after.
func (t *Tracker) Read(ctx context.Context) State {
	seen := t.reads.Load()
	t.readMu.Lock()
	defer t.readMu.Unlock()
	if t.reads.Load() == seen {
		t.readLocked(ctx)
	}
	t.markFirst()
	return t.State()
}

// FirstRead is closed once the first read has ended, whether it read the
// Grants or failed, and OnChange has returned; also when a Tracker started
// stops before reading. Until then Grants knows nothing because nothing was
// read yet, not because the read failed.
func (t *Tracker) FirstRead() <-chan struct{} { return t.first }

// Grants returns the statuses of the last read that succeeded; the zero
// Grants before the first (see State).
func (t *Tracker) Grants() Grants { return t.cur.Load().Grants }

// State returns what the Tracker knows, and how old it is.
func (t *Tracker) State() State { return *t.cur.Load() }

// Blocked is Grants().Blocked(perms).
func (t *Tracker) Blocked(perms []string) (perm string, status Status, blocked bool) {
	return t.Grants().Blocked(perms)
}

func (t *Tracker) markFirst() { t.firstOnce.Do(func() { close(t.first) }) }

// run is the Tracker's goroutine; it owns the timer and every read it
// starts.
func (t *Tracker) run(ctx context.Context, done chan struct{}) {
	defer close(done)
	defer t.markFirst()
	timer := time.NewTimer(0) // the first read, at once
	defer timer.Stop()
	next := time.Now() // when timer fires
	var last time.Time // when the last read started
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-t.nudge:
			// Too soon after the last read: the timer brings the next one,
			// no later than MinInterval after it. (Since Go 1.23, Reset
			// discards a tick not yet received.)
			if soon := last.Add(t.opts.MinInterval); time.Now().Before(soon) {
				if soon.Before(next) {
					next = soon
					timer.Reset(time.Until(next))
				}
				continue
			}
		}
		last = time.Now()
		t.readMu.Lock()
		t.readLocked(ctx)
		t.readMu.Unlock()
		if ctx.Err() != nil {
			return
		}
		t.markFirst()
		// The next read is Interval after this one, whatever caused it.
		next = time.Now().Add(t.opts.Interval)
		timer.Reset(t.opts.Interval)
	}
}

// readLocked reads the Grants once and reports a change; t.readMu is held.
func (t *Tracker) readLocked(ctx context.Context) {
	defer t.reads.Add(1)
	rctx, cancel := context.WithTimeout(ctx, t.opts.ReadTimeout)
	raw, err := t.opts.Read(rctx)
	cancel()
	if ctx.Err() != nil {
		return // closing: what was read no longer matters
	}
	var m map[string]Status
	if err == nil {
		m, err = Parse(raw)
	}
	prev := t.State()
	now := State{Grants: prev.Grants, ReadAt: prev.ReadAt, Err: err}
	switch {
	case err == nil:
		now.Grants, now.ReadAt = NewGrants(m), time.Now()
	case errors.Is(err, ErrNoSource):
		now.Grants, now.ReadAt = Grants{}, time.Time{}
	case prev.Grants.Known() && prev.Err == nil:
		// Said once per failing spell, not at every read.
		t.log.Warn().Err(err).Dur("age", prev.Age().Round(time.Second)).
			Msg("reading the macOS permissions failed; keeping those read before")
	}
	t.cur.Store(&now)
	if prev.Grants.Equal(now.Grants) {
		return
	}
	if err == nil {
		t.log.Info().Stringer("grants", now.Grants).Msg("permissions changed")
	}
	if t.opts.OnChange != nil {
		t.opts.OnChange(prev.Grants, now.Grants)
	}
}
