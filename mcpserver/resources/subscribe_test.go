package resources

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/mcpserver/backend"
)

// BenchmarkSubscribe has 1,000 sessions (the default --max-sessions; a
// machine's clients open a few) each subscribe to 20 logs and unsubscribe.
// Each subscription used to look at every live session.
func BenchmarkSubscribe(b *testing.B) {
	const sessions, logs = 1000, 20
	dir := b.TempDir()
	var uris []string
	for i := range logs {
		p := filepath.Join(dir, fmt.Sprintf("l%02d.log", i))
		if err := os.WriteFile(p, []byte("x\n"), 0o600); err != nil {
			b.Fatal(err)
		}
		uris = append(uris, FileURI(p))
	}
	s := New(Config{LogsDir: dir})
	opts := &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{}}
	register := s.Attach(opts, backend.View{})
	srv := mcp.NewServer(&mcp.Implementation{Name: "b"}, opts)
	register(srv)
	a := s.servers[0]
	var ss []*mcp.ServerSession
	for range sessions {
		_, st := mcp.NewInMemoryTransports()
		sess, err := srv.Connect(context.Background(), st, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { sess.Close() })
		ss = append(ss, sess)
	}
	b.ResetTimer()
	for b.Loop() {
		for _, sess := range ss {
			for _, u := range uris {
				if err := s.subscribe(a, &mcp.SubscribeRequest{Session: sess, Params: &mcp.SubscribeParams{URI: u}}); err != nil {
					b.Fatal(err)
				}
			}
		}
		for _, sess := range ss {
			for _, u := range uris {
				s.unsubscribe(a, &mcp.UnsubscribeRequest{Session: sess, Params: &mcp.UnsubscribeParams{URI: u}})
			}
		}
	}
}
