package listed

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkMark has 1,000 live sessions (the default --max-sessions) each
// list once. Every list past 64 sessions used to look at every live one.
func BenchmarkMark(b *testing.B) {
	m := mcp.NewServer(&mcp.Implementation{Name: "b"}, nil)
	var reqs []*mcp.ListPromptsRequest
	for range 1000 {
		_, st := mcp.NewInMemoryTransports()
		ss, err := m.Connect(context.Background(), st, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { ss.Close() })
		reqs = append(reqs, &mcp.ListPromptsRequest{Session: ss})
	}
	for b.Loop() {
		g := &Gate{Lists: []string{"prompts/list"}}
		for _, r := range reqs {
			g.mark(m, r)
		}
		if len(g.seen) != len(reqs) {
			b.Fatalf("%d sessions seen, want %d", len(g.seen), len(reqs))
		}
	}
}
