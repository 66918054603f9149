package parts

import (
	"container/list"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"sync"
	"time"
)

// Store holds results in parts for the sessions that made them, in
// memory only: bounded by bytes (the least recently read go first) and by
// time (a result not read for its TTL goes). Nothing is written anywhere:
// nothing held outlives the process. It starts no goroutine: expiry is
// checked on every use.
type Store struct {
	max int           // bytes held at most
	ttl time.Duration // how long a result is held after its last read
	now func() time.Time

	mu   sync.Mutex // guards the fields below
	used int
	byID map[string]*list.Element // of *Held
	lru  *list.List               // least recently read first
	// gone remembers, for a while, the ids that expired or were let go to
	// make room, so that their session is told so rather than "unknown".
	gone      map[string]Gone
	goneOrder []string
}

// Held is one result held in parts.
type Held struct {
	ID      string
	Owner   any    // the session that made it; only it reads it
	Tool    string // the tool whose result it is
	Parts   []Part
	size    int
	expires time.Time
}

// Gone is a held result no longer held, and why.
type Gone struct {
	Owner any
	Tool  string
	Why   string // "expired" or "let go to make room"
}

// maxGone is how many ids let go are remembered.
const maxGone = 4096

// ErrUnknown is the answer for an id not held for the asker: never made,
// made for another session, or let go long ago. It says nothing of which.
var ErrUnknown = errors.New("unknown result id")

// GoneError is the answer for an id of the asker's that is no longer held.
type GoneError struct{ Gone }

func (e *GoneError) Error() string { return "held result " + e.Why }

// NewStore returns a store that holds at most maxBytes of parts, each
// result for ttl after its last read.
func NewStore(maxBytes int, ttl time.Duration) *Store {
	return &Store{max: maxBytes, ttl: ttl, now: time.Now, byID: map[string]*list.Element{}, lru: list.New(), gone: map[string]Gone{}}
}

// TTL is how long a result is held after its last read.
func (s *Store) TTL() time.Duration { return s.ttl }

// Used is the bytes of parts held now.
func (s *Store) Used() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire()
	return s.used
}

// Hold keeps parts for owner and returns their id, unguessable; false
// when they cannot be held (no owner, or larger than the whole store).
func (s *Store) Hold(owner any, tool string, parts []Part) (string, bool) {
	size := 0
	for _, p := range parts {
		size += len(p.Text) + 64
	}
	if owner == nil || size > s.max {
		return "", false
	}
	id := newID()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire()
	for s.used+size > s.max {
		s.drop(s.lru.Front(), "let go to make room for newer results")
	}
	h := &Held{ID: id, Owner: owner, Tool: tool, Parts: parts, size: size, expires: s.now().Add(s.ttl)}
	s.byID[id] = s.lru.PushBack(h)
	s.used += size
	return id, true
}

// Get returns the result id held for owner, and holds it for another TTL.
// It returns ErrUnknown when no such result is held for owner, and a
// *GoneError when it was owner's but is no longer held.
func (s *Store) Get(owner any, id string) (*Held, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire()
	if e, ok := s.byID[id]; ok && owner != nil {
		h := e.Value.(*Held)
		if h.Owner == owner {
			h.expires = s.now().Add(s.ttl)
			s.lru.MoveToBack(e)
			return h, nil
		}
	}
	if g, ok := s.gone[id]; ok && owner != nil && g.Owner == owner {
		return nil, &GoneError{g}
	}
	return nil, ErrUnknown
}

// expire lets go of the results not read for their TTL: the least
// recently read are the first to expire, so it stops at the first that
// has not.
func (s *Store) expire() {
	now := s.now()
	for e := s.lru.Front(); e != nil && !now.Before(e.Value.(*Held).expires); e = s.lru.Front() {
		s.drop(e, "expired")
	}
}

// drop lets go of the result of e, remembering why.
func (s *Store) drop(e *list.Element, why string) {
	h := s.lru.Remove(e).(*Held)
	delete(s.byID, h.ID)
	s.used -= h.size
	if len(s.goneOrder) >= maxGone {
		delete(s.gone, s.goneOrder[0])
		s.goneOrder = s.goneOrder[1:]
	}
	s.gone[h.ID] = Gone{Owner: h.Owner, Tool: h.Tool, Why: why}
	s.goneOrder = append(s.goneOrder, h.ID)
}

// newID is 128 random bits, as letters and digits the model copies
// without mistakes.
func newID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return "r" + lower.EncodeToString(b[:])
}

var lower = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)
