package resources

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/manifest"
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
	a := s.servers.List()[0]
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

// BenchmarkUpdate applies a registry of 3,000 tools in 100 manifests with
// 1,000 declared resources (ten times a large real one) to 20 servers
// (HTTP header selections), each with a policy to ask.
func BenchmarkUpdate(b *testing.B) {
	var files []*manifest.File
	for m := range 100 {
		id := fmt.Sprintf("m%03d", m)
		var tools, methods, res []string
		for i := range 30 {
			name := fmt.Sprintf("%s.t%02d", id, i)
			tools = append(tools, fmt.Sprintf(`{"name":%q,"inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`, name))
			methods = append(methods, fmt.Sprintf(`%q:%q`, name, name))
			if i < 10 {
				res = append(res, fmt.Sprintf(`{"uri":"tairseach://%s/%d","name":"r%d","method":%q}`, id, i, i, name))
			}
		}
		src := fmt.Sprintf(`{"id":%q,"tools":[%s],"implementation":{"methods":{%s}},"resources":[%s]}`, id,
			strings.Join(tools, ","), strings.Join(methods, ","), strings.Join(res, ","))
		f, err := manifest.ParseFile(id+".json", []byte(src), manifest.Options{Prefix: "t_"})
		if err != nil {
			b.Fatal(err)
		}
		files = append(files, f)
	}
	reg := manifest.Build(files)
	s := New(Config{})
	for i := range 20 {
		opts := &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{}}
		hides := func(t manifest.Tool) string {
			if strings.HasSuffix(t.Name, fmt.Sprintf("t%02d", i)) {
				return "excluded"
			}
			return ""
		}
		s.Attach(opts, backend.View{Hides: hides})(mcp.NewServer(&mcp.Implementation{Name: "b"}, opts))
	}
	b.ReportAllocs()
	for b.Loop() {
		s.Update(reg)
	}
}
