package shutdown_test

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/geilt/tairseach-mcp/mcpserver/shutdown"
)

// The durations are short; the waits for what must happen are long, so
// that a loaded machine only makes the tests slower.
const (
	short = 50 * time.Millisecond
	long  = 10 * time.Second
)

// closedWithin reports whether ch is closed within d.
func closedWithin(ch <-chan struct{}, d time.Duration) bool {
	select {
	case <-ch:
		return true
	case <-time.After(d):
		return false
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// start returns an Owner of cfg reading the signals sent on the returned
// channel, closed at the end of the test.
func start(t *testing.T, cfg shutdown.Config) (*shutdown.Owner, chan<- os.Signal) {
	t.Helper()
	sig := make(chan os.Signal, 4)
	cfg.Signals = sig
	o := shutdown.New(cfg)
	o.Start(context.Background())
	t.Cleanup(o.Close)
	return o, sig
}

// waitSignals waits until o has counted n signals.
func waitSignals(t *testing.T, o *shutdown.Owner, n int) {
	t.Helper()
	deadline := time.Now().Add(long)
	for o.Status().Signals < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d signals counted after %v, want %d", o.Status().Signals, long, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestEndOfInputDrainsThenHurriesAtTheDrainTimeout(t *testing.T) {
	o, _ := start(t, shutdown.Config{Drain: short, Grace: time.Hour, StopAfter: short})
	if isClosed(o.Draining()) || o.Reason() != "" {
		t.Fatalf("draining before anything happened: %q", o.Reason())
	}
	start := time.Now()
	o.Drain(shutdown.EndOfInput)
	if !isClosed(o.Draining()) || o.Reason() != shutdown.EndOfInput {
		t.Fatalf("after end of input: draining %v, reason %q", isClosed(o.Draining()), o.Reason())
	}
	if o.Context().Err() != nil {
		t.Error("Context ended at the end of input; it ends at a stop signal")
	}
	if !closedWithin(o.Hurried(), long) {
		t.Fatal("not hurried at the drain timeout")
	}
	if d := time.Since(start); d < short {
		t.Errorf("hurried %v after the drain began, before the drain timeout %v", d, short)
	}
	st := o.Status()
	if st.Drain != shutdown.EndOfInput || st.Hurry != shutdown.DrainTimeout || st.Limit != short || o.Reason() != shutdown.DrainTimeout {
		t.Errorf("status %+v, reason %q", st, o.Reason())
	}
	if o.HurryContext().Err() == nil {
		t.Error("HurryContext not done once hurried")
	}
	if isClosed(o.Stopped()) {
		t.Error("stopped at the hurry, before StopAfter")
	}
	if !closedWithin(o.Stopped(), long) || !o.Status().Stopped {
		t.Fatal("not stopped StopAfter past the hurry")
	}
	if d := time.Since(st.HurriedAt); d < short {
		t.Errorf("stopped %v after the hurry, StopAfter is %v", d, short)
	}
}

func TestStopSignal(t *testing.T) {
	for _, tt := range []struct {
		name         string
		drain, grace time.Duration
		want         shutdown.Reason
	}{
		{"grace sooner", time.Hour, short, shutdown.ShutdownGrace},
		{"drain timeout sooner", short, time.Hour, shutdown.DrainTimeout},
		{"tie", short, short, shutdown.ShutdownGrace},
		{"no drain timeout", 0, short, shutdown.ShutdownGrace},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o, sig := start(t, shutdown.Config{Drain: tt.drain, Grace: tt.grace, StopAfter: short})
			sig <- syscall.SIGTERM
			if !closedWithin(o.Draining(), long) {
				t.Fatal("not draining after a stop signal")
			}
			if o.Context().Err() == nil {
				t.Error("Context not done at the stop signal")
			}
			if got := o.Status().Drain; got != shutdown.StopSignal {
				t.Errorf("drain reason %q, want %q", got, shutdown.StopSignal)
			}
			if !closedWithin(o.Hurried(), long) {
				t.Fatal("not hurried")
			}
			if got := o.Reason(); got != tt.want {
				t.Errorf("hurried for %q, want %q", got, tt.want)
			}
		})
	}
}

// A signal during the drain at end of input applies the grace when it ends
// the drain sooner, and not when it would make it longer.
func TestSignalDuringDrainAtEndOfInput(t *testing.T) {
	t.Run("grace sooner", func(t *testing.T) {
		o, sig := start(t, shutdown.Config{Drain: time.Hour, Grace: short})
		o.Drain(shutdown.EndOfInput)
		sig <- syscall.SIGINT
		if !closedWithin(o.Hurried(), long) {
			t.Fatal("the grace did not apply")
		}
		st := o.Status()
		if st.Drain != shutdown.EndOfInput || st.Hurry != shutdown.ShutdownGrace || st.Signals != 1 || st.Limit != short {
			t.Errorf("status %+v", st)
		}
	})
	t.Run("drain timeout sooner", func(t *testing.T) {
		o, sig := start(t, shutdown.Config{Drain: 4 * short, Grace: time.Hour})
		o.Drain(shutdown.EndOfInput)
		sig <- syscall.SIGINT
		waitSignals(t, o, 1)
		if !closedWithin(o.Hurried(), long) {
			t.Fatal("the drain timeout did not apply")
		}
		if got := o.Reason(); got != shutdown.DrainTimeout {
			t.Errorf("hurried for %q, want the drain timeout", got)
		}
	})
}

func TestSecondSignalHurriesAtOnce(t *testing.T) {
	o, sig := start(t, shutdown.Config{Drain: time.Hour, Grace: time.Hour, StopAfter: time.Hour})
	sig <- syscall.SIGTERM
	waitSignals(t, o, 1)
	time.Sleep(short)
	if isClosed(o.Hurried()) {
		t.Fatal("hurried by one signal")
	}
	sig <- syscall.SIGTERM
	if !closedWithin(o.Hurried(), long) {
		t.Fatal("a second signal did not hurry")
	}
	st := o.Status()
	if st.Hurry != shutdown.SecondSignal || st.Signals != 2 || st.Limit < short || st.Limit > long {
		t.Errorf("status %+v", st)
	}
	if isClosed(o.Stopped()) {
		t.Fatal("stopped before StopAfter")
	}
	// A third stops and abandons at once.
	sig <- syscall.SIGTERM
	if !closedWithin(o.Abandoned(), long) || !isClosed(o.Stopped()) {
		t.Fatal("a third signal did not stop and abandon")
	}
	if st := o.Status(); !st.Stopped || !st.Abandoned || st.Hurry != shutdown.SecondSignal {
		t.Errorf("status %+v", st)
	}
}

// Once the drain timeout has hurried the session, a stop signal is the
// first one (it drains, which has begun) and the next stops at once.
func TestSignalsAfterTheDrainTimeout(t *testing.T) {
	o, sig := start(t, shutdown.Config{Drain: short, Grace: time.Hour, StopAfter: time.Hour})
	o.Drain(shutdown.EndOfInput)
	if !closedWithin(o.Hurried(), long) {
		t.Fatal("not hurried at the drain timeout")
	}
	sig <- syscall.SIGTERM
	waitSignals(t, o, 1)
	if isClosed(o.Stopped()) || o.Reason() != shutdown.DrainTimeout {
		t.Fatalf("one signal after the hurry: stopped %v, reason %q", isClosed(o.Stopped()), o.Reason())
	}
	sig <- syscall.SIGTERM
	if !closedWithin(o.Stopped(), long) {
		t.Fatal("a second signal did not stop")
	}
	if isClosed(o.Abandoned()) {
		t.Fatal("abandoned at the second signal")
	}
	if got := o.Reason(); got != shutdown.DrainTimeout {
		t.Errorf("reason %q, want it to stay %q", got, shutdown.DrainTimeout)
	}
	sig <- syscall.SIGTERM
	if !closedWithin(o.Abandoned(), long) {
		t.Fatal("a third signal did not abandon")
	}
}

// GiveUp past the stop, the transports are told to abandon what has not
// ended.
func TestGiveUp(t *testing.T) {
	o, _ := start(t, shutdown.Config{Drain: short, StopAfter: short, GiveUp: 2 * short})
	o.Drain(shutdown.EndOfInput)
	if !closedWithin(o.Stopped(), long) {
		t.Fatal("not stopped")
	}
	stopped := time.Now()
	if isClosed(o.Abandoned()) {
		t.Fatal("abandoned at the stop")
	}
	if !closedWithin(o.Abandoned(), long) {
		t.Fatal("not abandoned GiveUp past the stop")
	}
	if d := time.Since(stopped); d < short {
		t.Errorf("abandoned %v after the stop, GiveUp is %v", d, 2*short)
	}
	if st := o.Status(); !st.Abandoned || st.Hurry != shutdown.DrainTimeout {
		t.Errorf("status %+v", st)
	}
}

func TestNoDeadlinesWaitForever(t *testing.T) {
	o, sig := start(t, shutdown.Config{})
	o.Drain(shutdown.EndOfInput)
	sig <- syscall.SIGTERM
	waitSignals(t, o, 1)
	if closedWithin(o.Hurried(), 4*short) {
		t.Fatalf("hurried without a deadline: %q", o.Reason())
	}
}

// Drain is told, not counted: a second Drain(StopSignal) does not hurry,
// and a later end of input does not change why the drain began.
func TestDrainIsNotASignal(t *testing.T) {
	o := shutdown.New(shutdown.Config{})
	defer o.Close()
	o.Drain(shutdown.StopSignal)
	o.Drain(shutdown.StopSignal)
	o.Drain(shutdown.EndOfInput)
	if closedWithin(o.Hurried(), short) {
		t.Fatal("Drain hurried")
	}
	st := o.Status()
	if st.Drain != shutdown.StopSignal || st.Signals != 0 || o.Context().Err() == nil {
		t.Errorf("status %+v, context %v", st, o.Context().Err())
	}
}

// Close stops the goroutine that receives the signals and waits for it:
// a signal sent afterwards is not received, and no deadline fires.
func TestCloseStopsEverything(t *testing.T) {
	sig := make(chan os.Signal, 4)
	o := shutdown.New(shutdown.Config{Drain: short, Signals: sig})
	o.Start(context.Background())
	o.Drain(shutdown.EndOfInput)
	o.Close()
	o.Close() // idempotent
	sig <- syscall.SIGTERM
	if closedWithin(o.Hurried(), 4*short) {
		t.Error("the drain timeout fired after Close")
	}
	if n := o.Status().Signals; n != 0 {
		t.Errorf("%d signals received after Close", n)
	}
	if o.Context().Err() == nil {
		t.Error("Context not done after Close")
	}
}

// The goroutine also ends with the context given to Start.
func TestStartContextEnds(t *testing.T) {
	sig := make(chan os.Signal, 4)
	o := shutdown.New(shutdown.Config{Signals: sig})
	ctx, cancel := context.WithCancel(context.Background())
	o.Start(ctx)
	cancel()
	done := make(chan struct{})
	go func() { o.Close(); close(done) }()
	if !closedWithin(done, long) {
		t.Fatal("Close did not return after the context ended")
	}
	sig <- syscall.SIGTERM
	time.Sleep(short)
	if n := o.Status().Signals; n != 0 {
		t.Errorf("%d signals received after the context ended", n)
	}
}

// Without Config.Signals the Owner receives the process's own SIGTERM.
func TestRealSignal(t *testing.T) {
	o := shutdown.New(shutdown.Config{Grace: time.Hour})
	o.Start(context.Background())
	defer o.Close()
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if !closedWithin(o.Draining(), long) {
		t.Fatal("SIGTERM did not drain")
	}
	if st := o.Status(); st.Drain != shutdown.StopSignal || st.Signals != 1 {
		t.Errorf("status %+v", st)
	}
}
