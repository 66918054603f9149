package stdio

import (
	"testing"
	"time"
)

// A call served inline that lasts hands reading on, once; a quick one
// keeps it; and the watch goes quiet when nothing is served inline.
func TestInlineWatch(t *testing.T) {
	took := make(chan struct{}, 4)
	w := newInlineWatch(func() { took <- struct{}{} })
	defer w.stop()

	for range 100 { // quick calls: the reader keeps reading
		if !w.end(w.begin()) {
			t.Fatal("a call that ended at once lost the reader's role")
		}
	}

	ticket := w.begin()
	select {
	case <-took:
	case <-time.After(5 * time.Second):
		t.Fatal("a call served inline for 5 s never handed reading on")
	}
	if w.end(ticket) {
		t.Fatal("the call still reads after the watch took reading over")
	}
	// A later call is watched again (the new reader begins it).
	ticket = w.begin()
	select {
	case <-took:
	case <-time.After(5 * time.Second):
		t.Fatal("the second long call never handed reading on")
	}
	if w.end(ticket) {
		t.Fatal("the second call still reads after the watch took reading over")
	}
	time.Sleep(10 * takeoverTick)
	if len(took) != 0 {
		t.Fatalf("reading was handed on %d more times with nothing served inline", len(took))
	}
	if w.armed.Load() {
		t.Fatal("the watch is still armed with nothing served inline")
	}
}
