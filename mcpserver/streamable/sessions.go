package streamable

import (
	"iter"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
)

// Sessions caps the live sessions of the stateful handler and closes
// those idle too long. It sees every request that names a session and
// every session the handler creates. A session is idle when none of its
// requests, event streams included, is being served; after timeout idle, it
// is closed. When a new session would go over the cap, the one idle the
// longest is closed, preferring one with no request running. Sessions the
// go-sdk closes by itself (DELETE) leave stale entries that are dropped at
// the next count.
type Sessions struct {
	all     func() iter.Seq[*mcp.ServerSession] // the go-sdk servers' sessions
	log     zerolog.Logger
	max     int
	timeout time.Duration

	mu   sync.Mutex
	byID map[string]*trackedSession
}

// NewSessions tracks the sessions all yields, at most max (0: no cap), each
// closed after timeout idle (0: never).
func NewSessions(all func() iter.Seq[*mcp.ServerSession], log zerolog.Logger, max int, timeout time.Duration) *Sessions {
	return &Sessions{all: all, log: log, max: max, timeout: timeout, byID: map[string]*trackedSession{}}
}

// Wrap tracks the sessions of next, the stateful go-sdk handler.
func (t *Sessions) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(SessionIDHeader)
		if id == "" {
			next.ServeHTTP(w, r)
			// The go-sdk names a session it created in the response.
			if id := w.Header().Get(SessionIDHeader); id != "" && r.Method == http.MethodPost {
				t.added(id)
			}
			return
		}
		t.begin(id)
		defer t.end(id)
		if r.Method != http.MethodDelete {
			next.ServeHTTP(w, r)
			return
		}
		// Only a session the go-sdk closed is forgotten: one whose DELETE
		// it refused (a bad header) lives on, under the cap and the
		// timeout.
		if Deleted(w, r, next) {
			t.forget(id)
		}
	})
}

func (t *Sessions) begin(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if ts := t.byID[id]; ts != nil {
		ts.running++
		ts.lastSeen = time.Now()
		if ts.timer != nil {
			ts.timer.Stop()
		}
	}
}

func (t *Sessions) end(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if ts := t.byID[id]; ts != nil {
		ts.running--
		ts.lastSeen = time.Now()
		if ts.running == 0 && ts.timer != nil {
			ts.timer.Reset(t.timeout)
		}
	}
}

func (t *Sessions) forget(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.dropLocked(id)
}

// dropLocked stops tracking id; t.mu is held.
func (t *Sessions) dropLocked(id string) {
	if ts := t.byID[id]; ts != nil {
		if ts.timer != nil {
			ts.timer.Stop()
		}
		delete(t.byID, id)
	}
}

// expire closes session id if it is still idle.
func (t *Sessions) expire(id string) {
	t.mu.Lock()
	ts := t.byID[id]
	if ts == nil || ts.running > 0 || time.Since(ts.lastSeen) < t.timeout {
		t.mu.Unlock()
		return
	}
	t.dropLocked(id)
	t.mu.Unlock()
	for ss := range t.all() {
		if ss.ID() == id {
			t.log.Debug().Str("session", id).Stringer("idle", t.timeout).Msg("closing an idle session")
			_ = ss.Close()
			return
		}
	}
}

// added records a new session and, over the cap, closes the sessions idle
// the longest.
func (t *Sessions) added(id string) {
	t.mu.Lock()
	ts := &trackedSession{lastSeen: time.Now()}
	if t.timeout > 0 {
		ts.timer = time.AfterFunc(t.timeout, func() { t.expire(id) })
	}
	t.byID[id] = ts
	if t.max <= 0 || len(t.byID) <= t.max {
		t.mu.Unlock()
		return
	}
	// The snapshot is taken under t.mu, so that no session added meanwhile
	// is pruned as gone.
	live := t.liveSessions()
	t.prune(live)
	type victim struct {
		id   string
		busy bool
	}
	var victims []victim
	for len(t.byID) > t.max {
		v := t.idlest(id)
		if v == "" {
			break
		}
		victims = append(victims, victim{v, t.byID[v].running > 0})
		t.dropLocked(v)
	}
	t.mu.Unlock()
	for _, v := range victims {
		ss := live[v.id]
		if ss == nil {
			continue
		}
		t.log.Info().Str("session", v.id).Int("max_sessions", t.max).Bool("busy", v.busy).Msg("closing the session idle the longest: too many sessions")
		if v.busy {
			// Close waits for the session's requests: not here.
			go func() { _ = ss.Close() }()
		} else {
			_ = ss.Close()
		}
	}
}

// idlest returns the session idle the longest other than keep, preferring
// one with no request running; t.mu is held.
func (t *Sessions) idlest(keep string) string {
	var best string
	var bestTS *trackedSession
	for id, ts := range t.byID {
		if id == keep {
			continue
		}
		idle, bestIdle := ts.running == 0, bestTS != nil && bestTS.running == 0
		switch {
		case bestTS == nil,
			idle && !bestIdle,
			idle == bestIdle && ts.lastSeen.Before(bestTS.lastSeen):
			best, bestTS = id, ts
		}
	}
	return best
}

// prune drops the entries of sessions that are gone; t.mu is held.
func (t *Sessions) prune(live map[string]*mcp.ServerSession) {
	for id := range t.byID {
		if live[id] == nil {
			t.dropLocked(id)
		}
	}
}

// liveSessions returns the go-sdk server's sessions by id.
func (t *Sessions) liveSessions() map[string]*mcp.ServerSession {
	live := map[string]*mcp.ServerSession{}
	for ss := range t.all() {
		if id := ss.ID(); id != "" {
			live[id] = ss
		}
	}
	return live
}

// Live returns the number of live sessions.
func (t *Sessions) Live() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.prune(t.liveSessions())
	return len(t.byID)
}

type trackedSession struct {
	lastSeen time.Time
	running  int         // requests of this session being served
	timer    *time.Timer // fires after timeout idle; nil without a timeout
}

// Deleted serves a DELETE of a session with next and reports whether it
// ended the session: next answered it with a 2xx status.
func Deleted(w http.ResponseWriter, r *http.Request, next http.Handler) bool {
	sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	next.ServeHTTP(sw, r)
	return sw.status >= 200 && sw.status < 300
}

// statusWriter keeps the status of a response that has no stream.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}
