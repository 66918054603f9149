package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/mcpserver/policy"
	"github.com/geilt/tairseach-mcp/mcpserver/resources"
)

func TestHTTPResources(t *testing.T) {
	fe := newFeatureEnv(t)
	startBackend(t, fe.socket)
	logPath := filepath.Join(fe.logs, "proxy.log")
	os.WriteFile(logPath, []byte("first\n"), 0o600)
	b := startHTTP(t, fe.env, fe.flags()...)
	uri := resources.FileURI(logPath)
	for _, proto := range protocols {
		t.Run(protoName(proto), func(t *testing.T) {
			updated := make(chan string, 16)
			cs := connectHTTP(t, b.url, proto, &mcp.ClientOptions{
				ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { updated <- r.Params.URI },
			}, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			if err != nil || rr.Contents[0].Text == "" {
				t.Fatalf("reading the log over HTTP: %v", err)
			}
			if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "tairseach://contacts/c-001"}); err != nil {
				t.Fatal(err)
			}
			if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond)
			f, _ := os.OpenFile(logPath, os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString("more\n")
			f.Close()
			select {
			case <-updated:
			case <-time.After(time.Second):
				t.Fatal("no notifications/resources/updated over HTTP within a second")
			}
		})
	}

	// A header selection hides the template of the tools it hides.
	hc := &http.Client{Transport: headerTransport{policy.HeaderExcludeTools: "tairseach_contacts_get"}}
	cs := connectHTTP(t, b.url, "2025-11-25", nil, hc)
	ts, err := cs.ListResourceTemplates(context.Background(), nil)
	if err != nil || len(ts.ResourceTemplates) != 0 {
		t.Fatalf("templates under X-MCP-Exclude-Tools: %+v %v", ts, err)
	}
	if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "tairseach://contacts/c-001"}); err == nil {
		t.Fatal("a template of an excluded tool was read")
	}
}
