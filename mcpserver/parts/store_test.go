package parts

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func partsOf(n, size int) []Part {
	ps := make([]Part, n)
	for i := range ps {
		ps[i] = Part{Text: []byte(strings.Repeat("x", size))}
	}
	return ps
}

func TestStoreOnlyItsSessionReadsAResult(t *testing.T) {
	s := NewStore(1<<20, time.Minute)
	alice, bob := new(int), new(int)
	id, ok := s.Hold(alice, "tairseach_contacts_list", partsOf(3, 100))
	if !ok {
		t.Fatal("not held")
	}
	if h, err := s.Get(alice, id); err != nil || len(h.Parts) != 3 {
		t.Fatalf("its session: %v, %v", h, err)
	}
	for _, who := range []any{bob, nil} {
		if _, err := s.Get(who, id); !errors.Is(err, ErrUnknown) {
			t.Errorf("another session read it: %v", err)
		}
	}
	if _, ok := s.Hold(nil, "t", partsOf(2, 10)); ok {
		t.Error("held a result for nobody")
	}
	other, _ := s.Hold(alice, "t", partsOf(2, 10))
	if other == id || len(id) < 26 {
		t.Errorf("ids %q and %q: want distinct, 128 random bits", id, other)
	}
}

func TestStoreBoundedByBytes(t *testing.T) {
	const max = 1 << 20
	s := NewStore(max, time.Hour)
	owner := new(int)
	var ids []string
	for range 1000 {
		id, ok := s.Hold(owner, "t", partsOf(10, 10_000))
		if !ok {
			t.Fatal("not held")
		}
		ids = append(ids, id)
		if s.Used() > max {
			t.Fatalf("%d bytes held, over the bound of %d", s.Used(), max)
		}
	}
	if _, err := s.Get(owner, ids[len(ids)-1]); err != nil {
		t.Fatalf("the newest result was let go: %v", err)
	}
	var gone *GoneError
	if _, err := s.Get(owner, ids[0]); !errors.As(err, &gone) || !strings.Contains(gone.Why, "room") {
		t.Fatalf("the oldest result: %v, want it let go to make room", err)
	}
	if _, ok := s.Hold(owner, "t", partsOf(1, max+1)); ok {
		t.Fatal("held a result larger than the store")
	}
}

func TestStoreExpiresAfterTheLastRead(t *testing.T) {
	now := time.Unix(0, 0)
	s := NewStore(1<<20, 10*time.Minute)
	s.now = func() time.Time { return now }
	owner := new(int)
	id, _ := s.Hold(owner, "tairseach_contacts_list", partsOf(2, 10))
	now = now.Add(9 * time.Minute)
	if _, err := s.Get(owner, id); err != nil {
		t.Fatalf("read within its time: %v", err)
	}
	now = now.Add(9 * time.Minute) // 18 minutes after it was made, 9 after its read
	if _, err := s.Get(owner, id); err != nil {
		t.Fatalf("a read holds it for another TTL: %v", err)
	}
	now = now.Add(10 * time.Minute)
	var gone *GoneError
	if _, err := s.Get(owner, id); !errors.As(err, &gone) || gone.Why != "expired" || gone.Tool != "tairseach_contacts_list" {
		t.Fatalf("after its TTL: %v, want it expired, naming its tool", err)
	}
	if _, err := s.Get(new(int), id); !errors.Is(err, ErrUnknown) {
		t.Fatalf("another session is told only that it is unknown: %v", err)
	}
	if s.Used() != 0 {
		t.Fatalf("%d bytes still held", s.Used())
	}
}
