package mcpserver

import (
	"fmt"

	"github.com/geilt/tairseach-mcp/mcpserver/check"
)

// OutputSchemaUse is what the server does with one tool's outputSchema, for
// `tools` and `doctor`.
type OutputSchemaUse struct {
	// Use is "" when the tool has no outputSchema, else "advertised" (sent
	// to clients and enforced: --output-schemas=strict), "checked" (not
	// sent; results are checked and the first mismatch logged: warn) or
	// "ignored" (off).
	Use string
	// Problem says why the schema is not to be trusted, or is "": it is not
	// valid JSON Schema, or a reply the real Tairseach server is known to
	// send for the tool's method does not match it.
	Problem string
}

// knownReplies are replies the real Tairseach server sends (read from its
// source) that do not match the outputSchemas of its own manifests: under
// --output-schemas=strict these successful calls would reach the model as
// failures.
var knownReplies = map[string]struct{ reply, shape string }{
	"calendar.updateEvent": {`{"updated":true,"event":{"id":"E1","title":"Standup","start":"2026-02-16T09:00:00Z","end":"2026-02-16T09:15:00Z"}}`, "{updated, event}"},
	"calendar.deleteEvent": {`{"deleted":true,"id":"E1"}`, "{deleted, id}"},
	"op.vaults.list":       {`[{"id":"v1","name":"Private"}]`, "a JSON array"},
	"op.items.list":        {`[{"id":"i1","title":"Login","vault":{"id":"v1"}}]`, "a JSON array"},
	"jira.projects.list":   {`[{"id":"10000","key":"PROJ","name":"Project"}]`, "a JSON array"},
}

// OutputSchemaUse reports what the server does with the outputSchema of the
// exposed tool name.
func (s *Server) OutputSchemaUse(name string) OutputSchemaUse {
	r, ok := s.routes.Load().byName[name]
	if !ok || len(r.tool.OutputSchema) == 0 {
		return OutputSchemaUse{}
	}
	var u OutputSchemaUse
	o := r.output
	switch {
	case o != nil:
		u.Use = "advertised"
	case r.check != nil:
		u.Use, o = "checked", r.check
	default:
		u.Use, o = "ignored", check.NewOutput(r.tool.OutputSchema)
	}
	if err := o.Compiles(); err != nil {
		u.Problem = fmt.Sprintf("not valid JSON Schema: %v", err)
		return u
	}
	known, ok := knownReplies[r.tool.Method]
	if !ok {
		return u
	}
	problem := "type: the result is not a JSON object"
	if known.reply[0] == '{' {
		p, err := o.Check([]byte(known.reply), false)
		if err != nil {
			u.Problem = fmt.Sprintf("not valid JSON Schema: %v", err)
			return u
		}
		problem = p
	}
	if problem != "" {
		u.Problem = fmt.Sprintf("the real Tairseach server's %s returns %s, which does not match: %s", r.tool.Method, known.shape, problem)
	}
	return u
}
