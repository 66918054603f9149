// Package routes builds the route table of a server: for each tool of a
// registry, whether it is served under a policy and the macOS permissions
// as last read, and if so everything a call of it needs, prepared once per
// reload. A Table is a value computed from the registry, the policy and
// the grants (Build), swapped whole; nobody writes to one after.
package routes

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver/check"
	"github.com/geilt/tairseach-mcp/mcpserver/permissions"
	"github.com/geilt/tairseach-mcp/mcpserver/policy"
	"github.com/geilt/tairseach-mcp/socketrpc"
)

// Route is everything a call of one tool needs.
type Route struct {
	Tool    manifest.Tool
	Client  *socketrpc.Client
	Timeout time.Duration
	Input   *check.Input  // arguments are checked against it
	Output  *check.Output // advertised and enforced; nil: no structuredContent
	Check   *check.Output // not advertised, results checked to warn the operator
	Confirm bool          // the user must confirm each call (--confirm)
}

// Table is the routes of one registry under one policy and the grants.
type Table struct {
	ByName map[string]*Route
	List   []byte // the tools/list result
	Listed int    // tools in List

	Hidden map[string]policy.Reason // MCP name → why it is not served
	// ByMethod are the routes served by socket method, in name order, and
	// HiddenByMethod the tools hidden: what a feature request resolves to.
	ByMethod       map[string][]*Route
	HiddenByMethod map[string][]Hidden
	// Blocked are the tools left out for a permission (also in Hidden),
	// by MCP name.
	Blocked map[string]Blocked
	// Internal are the routes of the server's own requests
	// (backend.Permissions), by method: of any tool of the registry that
	// calls it, served or not.
	Internal map[string]*Route
	Tools    map[string][]byte // tools served → their definition as clients see it
	Order    []string          // the tools served, in name order
	Discover *Discovery        // the discovery tools, in --tool-mode discover
	// Parts is the name of the tool that reads a part of a result sent in
	// parts; "" when results are not (Options.Parts off).
	Parts string

	// Visible and Defs are what clients are offered (the tools served, or
	// the discovery tools), as JSON and for the go-sdk.
	Visible map[string][]byte
	Defs    map[string]*mcp.Tool

	// The compiled schemas by their JSON, kept across reloads.
	inputs  map[string]*check.Input
	outputs map[string]*check.Output
}

// Empty is the table of a server before its first registry.
func Empty() *Table { return &Table{ByName: map[string]*Route{}} }

// Hidden is a tool that is not served, and why.
type Hidden struct {
	Name, File string
	Why        policy.Reason
}

// Blocked is a tool left out because macOS has not granted Perm.
type Blocked struct {
	Name, Perm string
	Status     permissions.Status
	Tool       manifest.Tool // what discovery's search matches
}

// Change counts what a new table did to the tool list clients see.
type Change struct {
	Added, Removed, Changed []string
	Rerouted                int // tools whose socket method or backend alone changed
}

// Empty reports whether clients saw no change.
func (c Change) Empty() bool { return len(c.Added)+len(c.Removed)+len(c.Changed) == 0 }

// Options are what a table is built under besides the registry.
type Options struct {
	Policy policy.Policy
	// HideUngranted leaves out the tools whose permission Grants says is
	// not granted; the zero Grants (unknown) leaves out nothing.
	HideUngranted bool
	Grants        permissions.Grants
	// Client is the pooled client of a socket ("" the default), and
	// GrantsClient the one the server's own reads of the grants use.
	Client, GrantsClient func(socket string) *socketrpc.Client
	CallTimeout          time.Duration
	OutputSchemas        bool // advertise outputSchemas (strict)
	CheckOutputs         bool // check results against unadvertised ones (warn)
	Discover             bool // --tool-mode discover
	Parts                bool // list the tool that reads a part of a result (--result-budget not off)
	Prefix               string
	Log                  zerolog.Logger
}

// Hides says why a tool is not served under o: the policy, else a
// permission not granted; the zero Reason when it is served.
func (o *Options) Hides(t manifest.Tool) policy.Reason {
	if why := o.Policy.Why(t); why.By != policy.NotHidden {
		return why
	}
	if perm, status, blocked := o.blocked(t); blocked {
		return policy.LeftOut(perm, status)
	}
	return policy.Reason{}
}

// blocked reports the permission that keeps t from working, if any.
func (o *Options) blocked(t manifest.Tool) (string, permissions.Status, bool) {
	if !o.HideUngranted || len(t.Permissions) == 0 {
		return "", "", false
	}
	return o.Grants.Blocked(t.Permissions)
}

// Build is the table of reg under o, and what changed for clients since
// old (the table before it).
func Build(reg *manifest.Registry, o Options, old *Table) (*Table, Change) {
	table := &Table{ByName: make(map[string]*Route, len(reg.Tools)), Hidden: map[string]policy.Reason{},
		ByMethod: map[string][]*Route{}, HiddenByMethod: map[string][]Hidden{}, Blocked: map[string]Blocked{}, Internal: map[string]*Route{},
		inputs: make(map[string]*check.Input, len(old.inputs)), outputs: make(map[string]*check.Output, len(old.outputs))}
	defs := make(map[string]*mcp.Tool, len(reg.Tools))
	visible := make(map[string][]byte, len(reg.Tools))
	var ch Change
	for _, t := range reg.Tools {
		if (t.Method == permissions.MethodList || t.Method == permissions.MethodRequest) && table.Internal[t.Method] == nil {
			_, r := o.prepare(t)
			r.Input, r.Confirm = cachedSchema(table.inputs, old.inputs, t.InputSchema, check.NewInput), false
			if t.Method == permissions.MethodList {
				r.Client = o.GrantsClient(t.Socket)
			}
			table.Internal[t.Method] = r
		}
		if why := o.Hides(t); why.By != policy.NotHidden {
			if perm, status, blocked := o.blocked(t); blocked && why.By == policy.ByPermission {
				table.Blocked[t.Name] = Blocked{t.Name, perm, status, t}
			}
			table.Hidden[t.Name] = why
			table.HiddenByMethod[t.Method] = append(table.HiddenByMethod[t.Method], Hidden{t.Name, t.File, why})
			continue
		}
		def, r := o.prepare(t)
		var err error
		r.Input = cachedSchema(table.inputs, old.inputs, t.InputSchema, check.NewInput)
		out := func() *check.Output {
			return cachedSchema(table.outputs, old.outputs, t.OutputSchema, check.NewOutput)
		}
		switch {
		case def.OutputSchema != nil:
			// Checked now, not on first use: a client that lists a schema
			// it cannot compile may refuse the whole list.
			r.Output = out()
			if err = r.Output.Compiles(); err != nil {
				err = fmt.Errorf("outputSchema is not valid JSON Schema: %w", err)
			}
		case o.CheckOutputs && len(t.OutputSchema) > 0:
			r.Check = out()
		}
		if err != nil {
			o.Log.Error().Str("tool", t.Name).Str("file", t.File).Err(err).Msg("skipping tool")
			continue
		}
		b, err := json.Marshal(def)
		if err != nil {
			o.Log.Error().Str("tool", t.Name).Str("file", t.File).Err(err).Msg("skipping tool")
			continue
		}
		table.ByName[t.Name] = r
		table.Order = append(table.Order, t.Name)
		table.ByMethod[t.Method] = append(table.ByMethod[t.Method], r)
		defs[t.Name] = def
		visible[t.Name] = b
		if p, ok := old.ByName[t.Name]; ok && string(old.Visible[t.Name]) == string(b) &&
			(p.Tool.Method != t.Method || p.Client != r.Client) {
			ch.Rerouted++
		}
	}

	table.Tools = visible
	table.List, table.Listed = listJSON(table.Order, visible), len(table.Order)
	if o.Discover {
		// The discovery tools are all that is listed; the tools served are
		// reached through them and seen at once after a reload.
		table.Discover = discoveryTools(o.Prefix)
		for name := range table.Discover.Defs {
			if _, ok := table.ByName[name]; ok {
				o.Log.Warn().Str("tool", name).Msg("a manifest tool has the name of a discovery tool; it is not callable in --tool-mode discover")
				delete(table.ByName, name)
			}
		}
		defs, visible = table.Discover.Defs, table.Discover.visible
		table.List, table.Listed = listJSON(table.Discover.Names, visible), len(table.Discover.Names)
	}
	if o.Parts && len(table.Order) > 0 {
		// Listed with the tools served: with none, there is nothing to
		// read in parts.
		def, b := partTool(o.Prefix)
		table.Parts = def.Name
		if _, ok := table.ByName[def.Name]; ok {
			o.Log.Warn().Str("tool", def.Name).Msg("a manifest tool has the name of the tool that reads a part of a large result; it is not callable")
			delete(table.ByName, def.Name)
			table.Order = slices.DeleteFunc(table.Order, func(n string) bool { return n == def.Name })
		}
		defs, visible = maps.Clone(defs), maps.Clone(visible)
		defs[def.Name], visible[def.Name] = def, b
		names := slices.Sorted(maps.Keys(visible))
		table.List, table.Listed = listJSON(names, visible), len(names)
	}
	table.Visible, table.Defs = visible, defs

	for name := range old.Visible {
		if _, ok := visible[name]; !ok {
			ch.Removed = append(ch.Removed, name)
		}
	}
	for name, b := range visible {
		prev, ok := old.Visible[name]
		switch {
		case !ok:
			ch.Added = append(ch.Added, name)
		case string(prev) != string(b):
			ch.Changed = append(ch.Changed, name)
		}
	}
	slices.Sort(ch.Added)
	slices.Sort(ch.Removed)
	slices.Sort(ch.Changed)
	return table, ch
}

// prepare builds the MCP definition and the route of one tool.
func (o *Options) prepare(t manifest.Tool) (*mcp.Tool, *Route) {
	def := &mcp.Tool{
		Name:        t.Name,
		Title:       t.Title,
		Description: t.Description,
		InputSchema: t.InputSchema,
	}
	if a := t.Annotations; a != (manifest.Annotations{}) {
		ann := &mcp.ToolAnnotations{
			Title:           a.Title,
			DestructiveHint: a.DestructiveHint,
			OpenWorldHint:   a.OpenWorldHint,
		}
		if a.ReadOnlyHint != nil {
			ann.ReadOnlyHint = *a.ReadOnlyHint
		}
		if a.IdempotentHint != nil {
			ann.IdempotentHint = *a.IdempotentHint
		}
		def.Annotations = ann
	}
	r := &Route{Tool: t, Client: o.Client(t.Socket), Timeout: o.CallTimeout, Confirm: o.Policy.NeedsConfirm(t)}
	if t.TimeoutMs > 0 {
		r.Timeout = time.Duration(t.TimeoutMs) * time.Millisecond
	}
	if o.OutputSchemas && len(t.OutputSchema) > 0 {
		def.OutputSchema = t.OutputSchema
	}
	return def, r
}

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
