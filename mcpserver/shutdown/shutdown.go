// Package shutdown owns the end of a serving process. An Owner is the one
// receiver of SIGINT and SIGTERM; it counts them, holds the drain timeout
// and the shutdown grace, and tells the transport serving the session
// (stdio or HTTP) what to do and why. A transport subscribes to no signal
// and keeps no deadline of its own: it waits on the Owner's channels and
// tells it when its input ends.
//
// The end of a session has three steps, each a channel closed once:
//
//   - Draining: the session takes no more work, and what is in flight may
//     finish. It begins at the end of the input or at the first stop
//     signal.
//   - Hurried: what is still running is cut off: each request is
//     cancelled and answered with an error, so that each call ends and is
//     recorded. It comes when the drain timeout or the shutdown grace
//     passes, or at a second stop signal.
//   - Stopped: StopAfter past the hurry, the transports give up the
//     answers they could not write (a client that no longer reads its
//     output); the process ends once every call cut off has ended.
//
// A call cut off ends at once (every wait of the call pipeline takes its
// context) and is recorded as it ends, so the transports wait for that
// without a time limit of their own. Abandoned, GiveUp past the stop (or at
// a third stop signal), is the last resort against one that does not: a
// call stuck writing to a client that no longer reads.
//
// The Owner decides nothing else: the transports answer, cancel and
// record; the command that built the Owner decides the exit status from
// its Status.
package shutdown

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"
)

// Reason says why a session is ending, as the Owner was told it.
type Reason string

const (
	// EndOfInput: the client closed the session's input (stdin).
	EndOfInput Reason = "end of input"
	// OutputClosed: the client closed the session's output (stdout): no
	// answer can reach it. The drain is bounded as at a stop signal.
	OutputClosed Reason = "output closed"
	// StopSignal: the process received SIGINT or SIGTERM.
	StopSignal Reason = "stop signal"
	// SecondSignal: another stop signal came while the session drained.
	SecondSignal Reason = "second stop signal"
	// DrainTimeout: the drain lasted Config.Drain.
	DrainTimeout Reason = "drain timeout"
	// ShutdownGrace: Config.Grace passed since the first stop signal.
	ShutdownGrace Reason = "shutdown grace"
)

// DefaultGiveUp is Config.GiveUp when unset: far longer than a cancelled
// call takes to end on a loaded machine.
const DefaultGiveUp = 5 * time.Second

// DefaultStopAfter is Config.StopAfter when unset: time enough for a client
// that reads to take the answers of what was cut off, little enough to
// leave most of the second between a client's SIGTERM deadline and its
// SIGKILL for the process to exit.
const DefaultStopAfter = 300 * time.Millisecond

// Config is what an Owner holds.
type Config struct {
	// Drain bounds the drain, however it began: once the session takes no
	// more work, calls in flight have this long to finish
	// (--drain-timeout). Zero: as long as they take.
	Drain time.Duration
	// Grace bounds the drain after a stop signal when it ends sooner than
	// Drain (--shutdown-grace). Zero: Drain alone applies.
	Grace time.Duration
	// StopAfter is how long after the hurry the transports may still spend
	// writing the answers of what they cut off; zero means
	// DefaultStopAfter.
	StopAfter time.Duration
	// GiveUp is how long after the stop the transports still wait for the
	// calls they cut off to end; zero means DefaultGiveUp.
	GiveUp time.Duration
	// Signals, when set, is read instead of subscribing to SIGINT and
	// SIGTERM: tests send their own.
	Signals <-chan os.Signal
	Logger  zerolog.Logger
}

// Status is where the end of a session stands.
type Status struct {
	// Drain is why the drain began: EndOfInput or StopSignal; empty while
	// the session serves.
	Drain Reason
	// Hurry is why what was left was cut off: DrainTimeout, ShutdownGrace
	// or SecondSignal; empty until then.
	Hurry Reason
	// Signals counts the stop signals received.
	Signals int
	// Began is when the drain began; HurriedAt when it was cut off.
	Began, HurriedAt time.Time
	// Limit is the bound the drain was cut off at: Config.Drain or
	// Config.Grace; at a second signal, how long the drain had lasted.
	Limit time.Duration
	// Stopped reports that StopAfter has passed since the hurry;
	// Abandoned, that GiveUp has passed since.
	Stopped, Abandoned bool
}

// Owner owns the end of a process's session; see the package comment. Its
// methods are safe for concurrent use.
//
// The goroutine Start begins owns the signal subscription; the deadlines
// are timers whose functions take mu. mu guards everything below it.
type Owner struct {
	cfg Config
	log zerolog.Logger

	sigCtx              context.Context // done at the first stop signal
	sigCancel           context.CancelFunc
	drainCtx, hurryCtx  context.Context
	drainDone, hurryEnd context.CancelFunc
	stopped, abandoned  chan struct{}

	startOnce sync.Once
	quit      chan struct{} // closed by Close: Start's goroutine returns
	done      chan struct{} // closed when Start's goroutine has returned

	mu       sync.Mutex
	st       Status
	deadline time.Time   // when the drain is cut off; zero: not bounded
	why      Reason      // what deadline stands for
	timer    *time.Timer // fires at deadline, then at the stop
	gen      int         // counts the timers set, so that a stale one does nothing
	closed   bool
}

// New returns an Owner of cfg. Without Start it receives no signals, but
// Drain and the deadlines work.
func New(cfg Config) *Owner {
	if cfg.StopAfter <= 0 {
		cfg.StopAfter = DefaultStopAfter
	}
	if cfg.GiveUp <= 0 {
		cfg.GiveUp = DefaultGiveUp
	}
	o := &Owner{cfg: cfg, log: cfg.Logger, stopped: make(chan struct{}), abandoned: make(chan struct{}),
		quit: make(chan struct{}), done: make(chan struct{})}
	o.sigCtx, o.sigCancel = context.WithCancel(context.Background())
	o.drainCtx, o.drainDone = context.WithCancel(context.Background())
	o.hurryCtx, o.hurryEnd = context.WithCancel(context.Background())
	return o
}

// Start subscribes to SIGINT and SIGTERM (or reads Config.Signals) in a
// goroutine of its own, until Close is called or ctx ends. Later calls do
// nothing.
func (o *Owner) Start(ctx context.Context) {
	o.startOnce.Do(func() {
		sig := o.cfg.Signals
		var own chan os.Signal
		if sig == nil {
			// Room for the second signal while the first is handled.
			own = make(chan os.Signal, 2)
			signal.Notify(own, os.Interrupt, syscall.SIGTERM)
			sig = own
		}
		go func() {
			defer close(o.done)
			if own != nil {
				defer signal.Stop(own)
			}
			for {
				select {
				case s, ok := <-sig:
					if !ok {
						sig = nil
						continue
					}
					o.signal(s)
				case <-o.quit:
					return
				case <-ctx.Done():
					return
				}
			}
		}()
	})
}

// SurviveClosedOutput has a write to a stdout or stderr whose reader is
// gone fail (EPIPE) rather than kill the process with SIGPIPE, for the
// whole life of the process: a serving transport then ends its session
// (OutputClosed) with every call recorded. A command that prints results
// does not call it, so that "| head" ends it quietly.
func (o *Owner) SurviveClosedOutput() {
	// Never read, nor stopped: each SIGPIPE is dropped, and the write that
	// raised it fails.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
}

// Close ends the signal subscription, waiting for Start's goroutine, and
// stops the deadlines. The channels stay as they are. It is safe to call
// more than once, and without Start.
func (o *Owner) Close() {
	o.mu.Lock()
	if !o.closed {
		o.closed = true
		close(o.quit)
		o.gen++
		if o.timer != nil {
			o.timer.Stop()
		}
	}
	o.mu.Unlock()
	started := true
	o.startOnce.Do(func() { started = false; close(o.done) })
	if started {
		<-o.done
	}
	o.sigCancel()
}

// Context is done at the first stop signal (or Drain(StopSignal)): what
// the process does besides serving, such as a CLI command's call, should
// stop. The end of the input does not end it.
func (o *Owner) Context() context.Context { return o.sigCtx }

// Draining is closed when the drain begins: the session takes no more work.
func (o *Owner) Draining() <-chan struct{} { return o.drainCtx.Done() }

// Hurried is closed when what is left must be cut off.
func (o *Owner) Hurried() <-chan struct{} { return o.hurryCtx.Done() }

// HurryContext is done when Hurried is closed.
func (o *Owner) HurryContext() context.Context { return o.hurryCtx }

// Stopped is closed StopAfter past the hurry: answers still unwritten are
// given up.
func (o *Owner) Stopped() <-chan struct{} { return o.stopped }

// Abandoned is closed GiveUp past the stop, or at a third stop signal: the
// transports stop waiting for the calls they cut off.
func (o *Owner) Abandoned() <-chan struct{} { return o.abandoned }

// Reason is why the session is ending: the hurry's reason once hurried,
// else the drain's; empty while it serves.
func (o *Owner) Reason() Reason {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.st.Hurry != "" {
		return o.st.Hurry
	}
	return o.st.Drain
}

// Status returns where the end of the session stands.
func (o *Owner) Status() Status {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.st
}

// Drain begins the drain for why, EndOfInput, OutputClosed or StopSignal,
// unless it has begun. A transport calls it with EndOfInput when its input
// ends, with OutputClosed when its output does; a StopSignal, as from a
// signal, also ends Context. OutputClosed and StopSignal apply the grace
// when it ends the drain sooner. It does not count as a signal: a second
// call does not hurry.
func (o *Owner) Drain(why Reason) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.drainLocked(why)
}

// signal handles one stop signal: the first drains, the second hurries
// (or stops, when the drain timeout or the grace has hurried already), a
// third abandons.
func (o *Owner) signal(s os.Signal) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.st.Signals++
	switch {
	case o.st.Signals == 1:
		o.log.Info().Stringer("signal", s).Msg("stop signal: taking no more requests, finishing those in flight")
		o.drainLocked(StopSignal)
	case o.st.Signals == 2 && o.st.Hurry == "":
		o.log.Warn().Stringer("signal", s).Msg("second stop signal: cutting off the requests in flight")
		o.hurryLocked(SecondSignal)
	case o.st.Signals == 2:
		o.log.Warn().Stringer("signal", s).Msg("second stop signal: not waiting for answers to be written")
		o.stopLocked()
	default:
		o.log.Warn().Stringer("signal", s).Msg("third stop signal: not waiting for anything")
		o.abandonLocked()
	}
}

func (o *Owner) drainLocked(why Reason) {
	now := time.Now()
	if why == StopSignal {
		// First, so that whoever sees the drain sees the signal's end.
		o.sigCancel()
	}
	if o.st.Drain == "" {
		o.st.Drain, o.st.Began = why, now
		o.drainDone()
		if o.cfg.Drain > 0 {
			o.setDeadlineLocked(now.Add(o.cfg.Drain), DrainTimeout)
		}
	}
	if (why != StopSignal && why != OutputClosed) || o.st.Hurry != "" || o.cfg.Grace <= 0 {
		return
	}
	// The grace counts from the signal; it applies when it ends the drain
	// first (at a tie, it is the reason).
	if d := now.Add(o.cfg.Grace); o.deadline.IsZero() || !d.After(o.deadline) {
		o.setDeadlineLocked(d, ShutdownGrace)
	}
}

func (o *Owner) setDeadlineLocked(d time.Time, why Reason) {
	o.deadline, o.why = d, why
	o.armLocked(time.Until(d), func() { o.hurryLocked(o.why) })
}

// armLocked replaces the pending timer with one that runs f, with o.mu
// held, after d.
func (o *Owner) armLocked(d time.Duration, f func()) {
	if o.closed {
		return
	}
	if o.timer != nil {
		o.timer.Stop()
	}
	o.gen++
	gen := o.gen
	o.timer = time.AfterFunc(d, func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		if gen == o.gen && !o.closed {
			f()
		}
	})
}

func (o *Owner) hurryLocked(why Reason) {
	if o.st.Hurry != "" {
		return
	}
	now := time.Now()
	if o.st.Drain == "" {
		// Only signals hurry a drain not begun, and the first drains.
		o.st.Drain, o.st.Began = StopSignal, now
		o.drainDone()
	}
	o.st.Hurry, o.st.HurriedAt = why, now
	switch why {
	case DrainTimeout:
		o.st.Limit = o.cfg.Drain
	case ShutdownGrace:
		o.st.Limit = o.cfg.Grace
	default:
		o.st.Limit = now.Sub(o.st.Began)
	}
	o.hurryEnd()
	o.armLocked(o.cfg.StopAfter, o.stopLocked)
}

func (o *Owner) stopLocked() {
	if o.st.Stopped {
		return
	}
	o.st.Stopped = true
	close(o.stopped)
	o.armLocked(o.cfg.GiveUp, o.abandonLocked)
}

func (o *Owner) abandonLocked() {
	if o.st.Abandoned {
		return
	}
	if o.st.Hurry == "" {
		o.hurryLocked(SecondSignal)
	}
	o.stopLocked()
	o.st.Abandoned = true
	close(o.abandoned)
	o.gen++
	if o.timer != nil {
		o.timer.Stop()
	}
}
