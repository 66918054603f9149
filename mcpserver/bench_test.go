package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver/stdio"
)

// benchSession connects a go-sdk client to srv through stdio.Transport over
// in-memory pipes: the whole stdio path but the process boundary.
func benchSession(b *testing.B, srv *Server) *mcp.ClientSession {
	b.Helper()
	c2sR, c2sW := io.Pipe()
	s2cR, s2cW := io.Pipe()
	ctx := context.Background()
	// ServeStdio reads the client's first line before it returns a session.
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(ctx, &stdio.Transport{In: c2sR, Out: s2cW, Logger: zerolog.Nop()}) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: s2cR, Writer: c2sW}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cs.Close()
		if err := <-done; err != nil {
			b.Error(err)
		}
	})
	return cs
}

func BenchmarkStdioCall(b *testing.B) {
	sock := startDemo(b)
	srv := New(Config{DefaultSocket: sock, OutputSchemas: true, Logger: zerolog.Nop()}, loadExample(b))
	defer srv.Close()
	cs := benchSession(b, srv)
	for _, size := range []int{100, 10_000, 1_000_000} {
		b.Run(fmt.Sprintf("blob-%d", size), func(b *testing.B) {
			args := map[string]any{"bytes": size}
			b.ReportAllocs()
			for b.Loop() {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "tairseach_demo_blob", Arguments: args})
				if err != nil || res.IsError {
					b.Fatalf("%v %v", err, res)
				}
			}
		})
	}
	b.Run("echo-parallel", func(b *testing.B) {
		args := map[string]any{"x": 1}
		b.ReportAllocs()
		b.SetParallelism(4)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "tairseach_demo_echo", Arguments: args})
				if err != nil || res.IsError {
					b.Fatalf("%v %v", err, res)
				}
			}
		})
	})
}

// BenchmarkCall is the bridge's own share of a call: Server.Call against
// the demo backend, without MCP framing.
func BenchmarkCall(b *testing.B) {
	sock := startDemo(b)
	srv := New(Config{DefaultSocket: sock, OutputSchemas: true, Logger: zerolog.Nop()}, loadExample(b))
	defer srv.Close()
	for _, size := range []int{100, 1_000_000} {
		b.Run(fmt.Sprintf("blob-%d", size), func(b *testing.B) {
			args := json.RawMessage(fmt.Sprintf(`{"bytes":%d}`, size))
			b.ReportAllocs()
			for b.Loop() {
				if res := srv.Call(context.Background(), "tairseach_demo_blob", args); res.IsError {
					b.Fatal(textOf(res))
				}
			}
		})
	}
}

// registryOfN builds a registry of n tools with realistic schemas.
func registryOfN(tb testing.TB, n int) *manifest.Registry {
	tb.Helper()
	var files []*manifest.File
	for f := 0; f < n/10; f++ {
		var tools, methods []string
		for i := 0; i < 10; i++ {
			name := fmt.Sprintf("svc%d.op%d", f, i)
			tools = append(tools, fmt.Sprintf(`{"name":%q,"description":"Operation %d of service %d.","inputSchema":{"type":"object","required":["id"],"properties":{"id":{"type":"string"},"limit":{"type":"integer","minimum":1},"tags":{"type":"array","items":{"type":"string"}}},"additionalProperties":false},"outputSchema":{"type":"object","required":["ok"],"properties":{"ok":{"type":"boolean"},"items":{"type":"array"}}},"annotations":{"readOnlyHint":true}}`, name, i, f))
			methods = append(methods, fmt.Sprintf("%q:%q", name, name))
		}
		m := fmt.Sprintf(`{"id":"svc%d","tools":[%s],"implementation":{"methods":{%s}}}`, f, strings.Join(tools, ","), strings.Join(methods, ","))
		file, err := manifest.ParseFile(fmt.Sprintf("svc%d.json", f), []byte(m), manifest.Options{Prefix: "tairseach_"})
		if err != nil {
			tb.Fatal(err)
		}
		files = append(files, file)
	}
	return manifest.Build(files)
}

func BenchmarkNew1000(b *testing.B) {
	reg := registryOfN(b, 1000)
	b.ReportAllocs()
	for b.Loop() {
		New(Config{DefaultSocket: "/x", OutputSchemas: true, Logger: zerolog.Nop()}, reg).Close()
	}
}

func BenchmarkNewCorpus(b *testing.B) {
	reg, err := manifest.Load("../manifest/testdata/tairseach-manifests", manifest.Options{Prefix: "tairseach_"})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		New(Config{DefaultSocket: "/x", OutputSchemas: true, Logger: zerolog.Nop()}, reg).Close()
	}
}
