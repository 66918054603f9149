package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/mcpserver"
	"github.com/geilt/tairseach-mcp/mcpserver/policy"
)

// TestCacheFields: every result that carries the cache fields of
// 2026-07-28 (SEP-2549) says "private", as each depends on this user, this
// machine or this session, with the ttlMs docs/resources-prompts.md gives:
// the lists a short one (each change is announced), the reads 0 (logs
// grow, the status and the backend's replies change with no notice). At
// 2026-07-28 and 2025-11-25 (where the go-sdk writes them too), over stdio,
// over HTTP, and through an X-MCP-* header selection, whose server is
// another.
func TestCacheFields(t *testing.T) {
	fe := newFeatureEnv(t)
	startBackend(t, fe.socket)
	if err := os.WriteFile(filepath.Join(fe.logs, "proxy.log"), []byte("a line of the user's log\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	listTTL := int(mcpserver.ListTTL / time.Millisecond)
	if listTTL <= 0 {
		t.Fatalf("ListTTL %v", mcpserver.ListTTL)
	}
	b := startHTTP(t, fe.env, fe.flags()...)
	for _, proto := range protocols {
		for _, transport := range []string{"stdio", "http", "http selection"} {
			t.Run(protoName(proto)+"/"+transport, func(t *testing.T) {
				var cs *mcp.ClientSession
				switch transport {
				case "stdio":
					cs = connect(t, fe.env, proto, fe.flags()...)
				case "http":
					cs = connectHTTP(t, b.url, proto, nil, nil)
				default:
					cs = connectHTTP(t, b.url, proto, nil, &http.Client{Transport: headerTransport{policy.HeaderToolsets: "contacts"}})
				}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				check := func(what string, c mcp.Cacheable, ttl int) {
					t.Helper()
					if c.CacheScope != "private" || c.TTLMs != ttl {
						t.Errorf("%s: cacheScope %q, ttlMs %d; want private, %d", what, c.CacheScope, c.TTLMs, ttl)
					}
				}
				tools, err := cs.ListTools(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				check("tools/list", tools.Cacheable, listTTL)
				prompts, err := cs.ListPrompts(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				check("prompts/list", prompts.Cacheable, listTTL)
				tmpls, err := cs.ListResourceTemplates(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				check("resources/templates/list", tmpls.Cacheable, listTTL)
				res, err := cs.ListResources(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				check("resources/list", res.Cacheable, listTTL)
				if len(res.Resources) < 4 || len(tmpls.ResourceTemplates) == 0 || len(prompts.Prompts) == 0 {
					t.Fatalf("%d resources, %d templates, %d prompts: the examples' are missing",
						len(res.Resources), len(tmpls.ResourceTemplates), len(prompts.Prompts))
				}
				// Each resource: a log, the status, the permissions, each
				// manifest, the contacts a manifest declares; and one of a
				// template.
				uris := []string{"tairseach://contacts/c-001"}
				for _, r := range res.Resources {
					uris = append(uris, r.URI)
				}
				for _, uri := range uris {
					rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
					if err != nil {
						t.Errorf("resources/read %s: %v", uri, err)
						continue
					}
					check("resources/read "+uri, rr.Cacheable, 0)
				}
			})
		}
	}
}
