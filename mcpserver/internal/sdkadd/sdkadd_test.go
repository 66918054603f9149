package sdkadd

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAddTurnsARefusalIntoAnError: a definition the go-sdk panics on is an
// error that quotes it, and the server keeps the definitions it took.
func TestAddTurnsARefusalIntoAnError(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "t"}, nil)
	h := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil }
	if err := Add(func() { s.AddTool(&mcp.Tool{Name: "ok", InputSchema: map[string]any{"type": "object"}}, h) }); err != nil {
		t.Fatalf("a good tool: %v", err)
	}
	err := Add(func() { s.AddTool(&mcp.Tool{Name: "bad", InputSchema: map[string]any{"type": "string"}}, h) })
	if err == nil || !strings.Contains(err.Error(), "the go-sdk refused it") {
		t.Fatalf("a tool whose schema is no object: %v", err)
	}
}
