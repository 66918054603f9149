package pipeline

import (
	"sync"

	"github.com/geilt/tairseach-mcp/mcpserver/permissions"
)

// permissionAsks remembers, for the whole process, what the user answered
// when asked whether Tairseach should ask macOS for a permission not yet
// determined: every session and header selection shares it, as the
// permission is the Tairseach app's, not a session's. The user is asked
// once per permission; a decline stays a decline, and after a yes macOS
// is asked once, until the permission's status changes (forget).
// docs/architecture.md says what the user and the model see.
type permissionAsks struct {
	mu sync.Mutex
	m  map[string]*permissionAsk // by permission
}

// permissionAsk is one question about a permission, asked or being asked.
type permissionAsk struct {
	status permissions.Status // the permission's status when asked
	done   chan struct{}      // closed once answered, or given up
	// Set before done is closed:
	answer askAnswer
}

type askAnswer int

const (
	askGaveUp    askAnswer = iota // no answer, or macOS could not be asked: forgotten
	askDeclined                   // the user said no (or dismissed the question)
	askRequested                  // the user said yes, and macOS was asked
)

// begin returns the question about perm at status: the one asked already
// or being asked (first false), or a new one this caller asks (first true)
// and must end.
func (a *permissionAsks) begin(perm string, status permissions.Status) (q *permissionAsk, first bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if q := a.m[perm]; q != nil && q.status == status {
		return q, false
	}
	if a.m == nil {
		a.m = make(map[string]*permissionAsk)
	}
	q = &permissionAsk{status: status, done: make(chan struct{})}
	a.m[perm] = q
	return q, true
}

// end records the answer to q; an answer of askGaveUp forgets it, so the
// next call asks again.
func (a *permissionAsks) end(perm string, q *permissionAsk, answer askAnswer) {
	a.mu.Lock()
	q.answer = answer
	if answer == askGaveUp && a.m[perm] == q {
		delete(a.m, perm)
	}
	a.mu.Unlock()
	close(q.done)
}

// declined reports whether the user declined to have macOS asked for perm,
// and the permission has not changed since.
func (a *permissionAsks) declined(perm string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	q := a.m[perm]
	if q == nil {
		return false
	}
	select {
	case <-q.done:
		return q.answer == askDeclined
	default:
		return false
	}
}

// forget drops what was answered about the permissions whose status in g
// is not the one they were asked at. Grants that know nothing forget
// nothing: a read that failed changes no permission.
func (a *permissionAsks) forget(g permissions.Grants) {
	if !g.Known() {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for perm, q := range a.m {
		if g.Status(perm) != q.status {
			delete(a.m, perm)
		}
	}
}
