package attached

import (
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
