package routes

import (
	"encoding/json"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/manifest"
)

// Discovery is the three tools of --tool-mode discover, which list,
// describe and call the tools served.
type Discovery struct {
	Search, Describe, Call string // their MCP names
	Names                  []string
	Defs                   map[string]*mcp.Tool
	visible                map[string][]byte
}

// The discovery tools' names, after the prefix.
const (
	searchToolName   = "search_tools"
	describeToolName = "describe_tool"
	callToolName     = "call_tool"
)

func boolPtr(b bool) *bool { return &b }

// discoveryTools builds the discovery tools' definitions.
func discoveryTools(prefix string) *Discovery {
	name := func(n string) string { m, _ := manifest.MCPName(prefix, n); return m }
	d := &Discovery{Search: name(searchToolName), Describe: name(describeToolName), Call: name(callToolName)}
	// In name order, as the go-sdk lists them where it answers tools/list.
	d.Names = []string{d.Call, d.Describe, d.Search}
	slices.Sort(d.Names)
	d.Defs = map[string]*mcp.Tool{
		d.Search: {
			Name:        d.Search,
			Description: "Find the Tairseach tools for a task: give a few words (\"contacts search\", \"calendar events\"); returns matching tool names with one-line descriptions. Then " + d.Describe + " for the arguments and " + d.Call + " to run one.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"words to look for in tool names and descriptions; empty lists every tool"},"limit":{"type":"integer","minimum":1,"maximum":100,"description":"most results (default 10)"}}}`),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: boolPtr(false)},
		},
		d.Describe: {
			Name:        d.Describe,
			Description: "Show one Tairseach tool's full definition: its description, inputSchema and annotations.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"the tool's name, as ` + d.Search + ` returns it"}},"required":["name"]}`),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: boolPtr(false)},
		},
		d.Call: {
			Name:        d.Call,
			Description: "Call one Tairseach tool by name with its arguments (an object matching its inputSchema); returns the tool's own result.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"the tool's name"},"arguments":{"type":"object","description":"the tool's arguments"}},"required":["name"]}`),
			Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(true), OpenWorldHint: boolPtr(true)},
		},
	}
	d.visible = make(map[string][]byte, 3)
	for n, def := range d.Defs {
		b, _ := json.Marshal(def)
		d.visible[n] = b
	}
	return d
}
