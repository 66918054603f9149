package streamable

import (
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// Over the cap, the tracker closes the idlest session with no request
// running before any busy one, and never the one just made.
func TestSessionTrackerIdlest(t *testing.T) {
	tr := NewSessions(nil, zerolog.Nop(), 2, 0)
	now := time.Now()
	tr.byID = map[string]*trackedSession{
		"busy-oldest": {lastSeen: now.Add(-time.Hour), running: 1},
		"idle-old":    {lastSeen: now.Add(-time.Minute)},
		"idle-new":    {lastSeen: now.Add(-time.Second)},
		"new":         {lastSeen: now.Add(-2 * time.Hour)},
	}
	for _, want := range []string{"idle-old", "idle-new", "busy-oldest", ""} {
		got := tr.idlest("new")
		if got != want {
			t.Fatalf("idlest = %q, want %q", got, want)
		}
		delete(tr.byID, got)
	}
}
