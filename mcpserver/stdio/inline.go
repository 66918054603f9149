package stdio

import (
	"sync/atomic"
	"time"
)

// takeoverTick is the period of the inline watch: a call served inline
// hands reading to a new goroutine once two ticks in a row found it
// running, that is between one and two ticks after it started.
const takeoverTick = time.Millisecond

// inlineWatch notices a call served inline (see conn.serveInline) that
// outlasts a tick, and hands reading on, so that the call's cancellation
// and the requests sent meanwhile are read.
//
// It used to arm a timer for each call. Arming a timer wakes a thread of
// the runtime to take note of it: about 8 µs of CPU a call, a sixth of
// the bridge's own. Now one timer ticks while calls are served inline,
// is re-armed at most once a tick, and stops when a tick finds nothing
// served inline; so a sequential client pays for a timer every few calls
// at most, and an idle session for none.
type inlineWatch struct {
	cur     atomic.Uint64 // ticket of the call served inline; 0: none
	last    uint64        // the last ticket given; owned by the goroutine that reads
	suspect atomic.Uint64 // what the last tick found in cur
	armed   atomic.Bool
	timer   *time.Timer
	// takeOver reads on; it is called on the timer's goroutine once a
	// call served inline lost the role of reader.
	takeOver func()
}

func newInlineWatch(takeOver func()) *inlineWatch {
	w := &inlineWatch{takeOver: takeOver}
	w.timer = time.AfterFunc(time.Hour, w.tick)
	w.timer.Stop()
	return w
}

// begin marks the start of a call served inline by the goroutine that
// reads, and returns its ticket for end.
func (w *inlineWatch) begin() uint64 {
	w.last++
	t := w.last
	w.cur.Store(t)
	w.arm()
	return t
}

// end marks the end of the call of ticket t and reports whether its
// goroutine still reads: false when a tick took reading over.
func (w *inlineWatch) end(t uint64) bool {
	return w.cur.CompareAndSwap(t, 0)
}

func (w *inlineWatch) arm() {
	if !w.armed.Load() && w.armed.CompareAndSwap(false, true) {
		w.timer.Reset(takeoverTick)
	}
}

// tick runs on the timer's goroutine.
func (w *inlineWatch) tick() {
	t := w.cur.Load()
	if t != 0 && w.suspect.Swap(t) == t && w.cur.CompareAndSwap(t, 0) {
		// The same call at two ticks in a row: read on here. The next
		// call served inline arms the timer again.
		w.armed.Store(false)
		w.takeOver()
		return
	}
	w.armed.Store(false)
	// A call begun before the store above saw armed still true and did
	// not arm: arm for it. (begin stores cur before it looks at armed.)
	if w.cur.Load() != 0 {
		w.arm()
	}
}

// stop stops the timer; a tick already running may still take over.
func (w *inlineWatch) stop() { w.timer.Stop() }
