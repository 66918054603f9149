package attached

import (
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/mcpserver/internal/listed"
)

// TestServers: a server is brought in step when attached and at every
// resync until it is detached, under the feature's lock.
func TestServers(t *testing.T) {
	var mu sync.Mutex
	synced := map[string]int{}
	s := New(&mu, func(name string) {
		if mu.TryLock() {
			t.Error("sync ran without the feature's lock")
			mu.Unlock()
		}
		synced[name]++
	})
	a, b := mcp.NewServer(&mcp.Implementation{Name: "a"}, nil), mcp.NewServer(&mcp.Implementation{Name: "b"}, nil)
	s.Attach(a, "a", &listed.Gate{Lists: []string{"prompts/list"}, Notify: "notifications/prompts/list_changed"})
	s.Attach(b, "b", &listed.Gate{Lists: []string{"prompts/list"}, Notify: "notifications/prompts/list_changed"})
	s.Resync()
	s.Detach(a)
	s.Resync()
	if synced["a"] != 2 || synced["b"] != 3 {
		t.Errorf("synced %v, want a twice (attach, resync) and b three times", synced)
	}
	mu.Lock()
	if l := s.List(); len(l) != 1 || l[0] != "b" {
		t.Errorf("kept %v after detaching a", l)
	}
	mu.Unlock()
}

// TestRegister: what is no longer wanted is removed in one call, what
// changed is added again, what did not is left alone, and a failed add is
// tried again next time.
func TestRegister(t *testing.T) {
	reg := map[string]string{}
	var removed [][]string
	var added []string
	fail := map[string]bool{}
	sync := func(want map[string]string) {
		added = nil
		Register(reg, want, func(v string) string { return "key " + v },
			func(names ...string) { removed = append(removed, names) },
			func(name, v string) error {
				if fail[name] {
					return errors.New("refused")
				}
				added = append(added, name+"="+v)
				return nil
			})
		slices.Sort(added)
	}
	fail["c"] = true
	sync(map[string]string{"a": "1", "b": "1", "c": "1"})
	if !slices.Equal(added, []string{"a=1", "b=1"}) || len(removed) != 0 || len(reg) != 2 {
		t.Fatalf("first sync: added %v, removed %v, kept %v", added, removed, reg)
	}
	fail["c"] = false
	sync(map[string]string{"a": "1", "b": "2", "c": "1"})
	if !slices.Equal(added, []string{"b=2", "c=1"}) || len(removed) != 0 {
		t.Fatalf("second sync: added %v (want b changed and c tried again), removed %v", added, removed)
	}
	sync(map[string]string{"b": "2"})
	if len(added) != 0 || len(removed) != 1 || !slices.Equal(slices.Sorted(slices.Values(removed[0])), []string{"a", "c"}) {
		t.Fatalf("third sync: added %v, removed %v", added, removed)
	}
	if !maps.Equal(reg, map[string]string{"b": "key 2"}) {
		t.Fatalf("kept %v", reg)
	}
}
