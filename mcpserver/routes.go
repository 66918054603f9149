package mcpserver

import (
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver/check"
	"github.com/geilt/tairseach-mcp/mcpserver/permissions"
	"github.com/geilt/tairseach-mcp/mcpserver/policy"
	"github.com/geilt/tairseach-mcp/socketrpc"
)

// route is everything a call of one tool needs, prepared once per reload.
type route struct {
	tool    manifest.Tool
	client  *socketrpc.Client
	timeout time.Duration
	input   *check.Input  // arguments are checked against it
	output  *check.Output // advertised and enforced; nil: no structuredContent
	check   *check.Output // not advertised, results checked to warn the operator
	confirm bool          // the user must confirm each call (--confirm)
}

type routeTable struct {
	byName map[string]*route
	list   []byte // the tools/list result
	listed int    // tools in list

	hidden map[string]policy.Reason // MCP name → why it is not served
	// byMethod are the routes served by socket method, in name order, and
	// hiddenByMethod the tools hidden: what a feature request resolves to.
	byMethod       map[string][]*route
	hiddenByMethod map[string][]hiddenTool
	// blocked are the tools left out for a permission (also in hidden),
	// by MCP name.
	blocked map[string]blockedTool
	// internal are the routes of the server's own requests
	// (backend.Permissions), by method: of any tool of the registry that
	// calls it, served or not.
	internal map[string]*route
	tools    map[string][]byte // tools served → their definition as clients see it
	order    []string          // the tools served, in name order
	discover *discovery        // the discovery tools, in --tool-mode discover
}

// hiddenTool is a tool the policy hides, and why.
type hiddenTool struct {
	name, file string
	why        policy.Reason
}

// blockedTool is a tool left out because macOS has not granted perm.
type blockedTool struct {
	name, perm string
	status     permissions.Status
	tool       manifest.Tool // what discovery's search matches
}

// Change counts what Apply did to the visible tool list.
type Change struct {
	Added, Removed, Changed []string
	Rerouted                int // tools whose socket method or backend alone changed
}

// Empty reports whether clients saw no change.
func (c Change) Empty() bool { return len(c.Added)+len(c.Removed)+len(c.Changed) == 0 }

// cachedSchema returns the schema value of b from m, else from old (the
// previous registry's), else a new one.
func cachedSchema[T any](m, old map[string]*T, b json.RawMessage, mk func(json.RawMessage) *T) *T {
	if l, ok := m[string(b)]; ok {
		return l
	}
	l, ok := old[string(b)]
	if !ok {
		l = mk(b)
	}
	m[string(b)] = l
	return l
}

// listJSON is the tools/list result: the tools in the order of names.
func listJSON(names []string, visible map[string][]byte) []byte {
	n := len(`{"tools":[]}`)
	for _, b := range visible {
		n += len(b) + 1
	}
	buf := make([]byte, 0, n)
	buf = append(buf, `{"tools":[`...)
	first := true
	for _, name := range names {
		b, ok := visible[name]
		if !ok {
			continue
		}
		if !first {
			buf = append(buf, ',')
		}
		first = false
		buf = append(buf, b...)
	}
	return append(buf, "]}"...)
}

// discovery is the three tools of --tool-mode discover.
type discovery struct {
	search, describe, call string // their MCP names
	names                  []string
	defs                   map[string]*mcp.Tool
	visible                map[string][]byte
}
