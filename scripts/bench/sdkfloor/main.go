// Command sdkfloor is the "sdk-floor" contender of scripts/bench: the least
// a go-sdk stdio MCP server can do for the same tools as tairseach-mcp.
//
// It loads the same manifests with the project's manifest package and
// registers the same tool definitions (names, titles, descriptions, schemas,
// annotations), so tools/list and initialize cost the same to produce and to
// decode. Its tools answer at once, from memory, with the content the bridge
// would return: a tool whose method is demo.blob returns {"data":"xxx…"} of
// the requested size, every other tool returns its arguments (what demo.echo
// does behind the bridge). Both come back as text plus, when the tool has an
// outputSchema, the same JSON as structuredContent.
//
// Usage: sdkfloor --manifests DIR [--prefix tairseach_]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/manifest"
)

func main() {
	dir := flag.String("manifests", "", "manifests directory (required)")
	prefix := flag.String("prefix", "tairseach_", "prefix of every MCP tool name")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "usage: sdkfloor --manifests DIR [--prefix P]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *dir, *prefix); err != nil {
		fmt.Fprintf(os.Stderr, "sdkfloor: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, dir, prefix string) error {
	reg, err := manifest.Load(dir, manifest.Options{Prefix: prefix})
	if err != nil {
		return err
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "sdkfloor", Version: "0"}, &mcp.ServerOptions{
		// The bridge's capabilities, so that initialize looks alike.
		Capabilities: &mcp.ServerCapabilities{
			Tools: &mcp.ToolCapabilities{ListChanged: true},
			//lint:ignore SA1019 the bridge advertises logging, for 2025-11-25 clients
			Logging: &mcp.LoggingCapabilities{},
		},
	})
	var blobs blobCache
	for _, t := range reg.Tools {
		def := definition(t)
		structured := len(t.OutputSchema) > 0
		var h mcp.ToolHandler
		if t.Method == "demo.blob" {
			h = func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				p := struct {
					Bytes int `json:"bytes"`
				}{Bytes: 1024}
				if len(req.Params.Arguments) > 0 {
					if err := json.Unmarshal(req.Params.Arguments, &p); err != nil {
						return errorResult(err.Error()), nil
					}
				}
				return textResult(blobs.get(max(p.Bytes, 0)), structured), nil
			}
		} else {
			h = func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				args := req.Params.Arguments
				if len(args) == 0 || string(args) == "null" {
					args = json.RawMessage("{}")
				}
				return textResult(args, structured), nil
			}
		}
		srv.AddTool(def, h)
	}
	return srv.Run(ctx, &mcp.StdioTransport{})
}

// definition is the MCP tool as mcpserver publishes it (see prepare there).
func definition(t manifest.Tool) *mcp.Tool {
	def := &mcp.Tool{
		Name:        t.Name,
		Title:       t.Title,
		Description: t.Description,
		InputSchema: t.InputSchema,
	}
	if len(t.OutputSchema) > 0 {
		def.OutputSchema = t.OutputSchema
	}
	if a := t.Annotations; a != (manifest.Annotations{}) {
		ann := &mcp.ToolAnnotations{Title: a.Title, DestructiveHint: a.DestructiveHint, OpenWorldHint: a.OpenWorldHint}
		if a.ReadOnlyHint != nil {
			ann.ReadOnlyHint = *a.ReadOnlyHint
		}
		if a.IdempotentHint != nil {
			ann.IdempotentHint = *a.IdempotentHint
		}
		def.Annotations = ann
	}
	return def
}

func textResult(b []byte, structured bool) *mcp.CallToolResult {
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
	if structured {
		res.StructuredContent = json.RawMessage(b)
	}
	return res
}

func errorResult(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// blobCache keeps demo.blob results by size, as the demo backend keeps its
// last one, so that a result costs nothing to build.
type blobCache struct {
	mu sync.Mutex // guards m
	m  map[int][]byte
}

// get returns {"data":"xxx…"} with n x's.
func (c *blobCache) get(n int) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b, ok := c.m[n]; ok {
		return b
	}
	if c.m == nil {
		c.m = make(map[int][]byte)
	}
	b := make([]byte, 0, n+11)
	b = append(b, `{"data":"`...)
	for range n {
		b = append(b, 'x')
	}
	b = append(b, `"}`...)
	c.m[n] = b
	return b
}
