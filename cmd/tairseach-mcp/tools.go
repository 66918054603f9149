package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver"
	"github.com/geilt/tairseach-mcp/mcpserver/permissions"
)

type toolsFlags struct {
	json    bool
	all     bool
	summary bool
	budget  bool
}

func newToolsCmd(o *options, stdout, stderr io.Writer) *cobra.Command {
	var f toolsFlags
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "List the tools the server would expose",
		Long: `List the tools the server would expose, with their socket method, backend socket,
manifest file and annotations. Annotations are shown compactly: ro (readOnlyHint), idem
(idempotentHint), destr (destructiveHint), open (openWorldHint); !name marks a hint set to
false, and a hint the manifest leaves out is not shown.

OUTPUT says what the server does with the tool's outputSchema (see --output-schemas):
checked (the default, warn: not advertised; results are checked and the first mismatch of
each tool is logged), advertised (strict: sent to clients, results must match), ignored
(off), or - for none. "untrusted" marks a schema that is not valid JSON Schema or that
the real Tairseach server's replies are known not to match; the reasons follow the table.

PERMISSION is the macOS permission a tool needs and its status as the Tairseach app
reports it (permissions.list), "?" when it cannot be read, or - for none. With
--hide-ungranted (the default) a tool whose permission is not granted is not exposed.

With --all, the tools that are not exposed follow, each with the reason (a manifest
problem, the flag that hides it: --toolsets, --read-only, --tools, --exclude-tools, or
a macOS permission not granted, with how to grant it).

With --summary, one line per toolset (a manifest id): its tools, how many of them the
flags serve, and the bytes and estimated tokens (bytes/4) they add to tools/list.
With --budget, one line: the size of the tools/list result for the flags and
--tool-mode, and a warning when it lists more tools than a known client sends to its
model (Cursor 40, Windsurf 50, VS Code 128).`,
		Example: `  tairseach-mcp tools
  tairseach-mcp tools --all
  tairseach-mcp tools --json | jq -r '.[].name'
  tairseach-mcp tools --summary
  tairseach-mcp --read-only --toolsets contacts,calendar tools --budget
  tairseach-mcp --tool-mode discover tools --budget`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return listTools(cmd.Context(), o, f, o.cliLogger(cmd, stderr), stdout, stderr)
		},
	}
	cmd.Flags().BoolVar(&f.json, "json", false, "print a JSON array of objects")
	cmd.Flags().BoolVar(&f.all, "all", false, "also list the tools that are not exposed, and why")
	cmd.Flags().BoolVar(&f.summary, "summary", false, "list the toolsets, with their tool counts and tools/list sizes")
	cmd.Flags().BoolVar(&f.budget, "budget", false, "print the size of tools/list (bytes, estimated tokens) and warn when over a client's tool cap")
	return cmd
}

// toolJSON is one line of `tools --json`.
type toolJSON struct {
	Name         string          `json:"name"`
	ToolName     string          `json:"toolName"`
	Exposed      bool            `json:"exposed"`
	Reason       string          `json:"reason,omitempty"` // why a tool is not exposed
	Method       string          `json:"method,omitempty"`
	Socket       string          `json:"socket,omitempty"`
	File         string          `json:"file"`
	ManifestID   string          `json:"manifestId,omitempty"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	Annotations  *annotations    `json:"annotations,omitempty"`
	TimeoutMs    int             `json:"timeoutMs,omitempty"`
	Renamed      bool            `json:"renamed,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// OutputSchemaUse and OutputSchemaProblem are mcpserver.OutputSchemaUse.
	OutputSchemaUse     string `json:"outputSchemaUse,omitempty"`
	OutputSchemaProblem string `json:"outputSchemaProblem,omitempty"`
}

// annotations are the hints as the manifest sets them; absent ones are omitted.
type annotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// skippedTool is a tool that is not exposed, with the reason in words.
type skippedTool struct {
	name, toolName, file, reason string
}

// toolListing is what `tools` shows: the exposed tools and, for --all, the others.
type toolListing struct {
	exposed []manifest.Tool
	skipped []skippedTool
}

// collectTools asks the server which of the registry's tools it exposes:
// it may refuse one the registry accepted (a schema the SDK rejects).
func collectTools(reg *manifest.Registry, srvLookup func(string) (manifest.Tool, bool), hidden func(string) (string, bool)) toolListing {
	var l toolListing
	for _, t := range reg.Tools {
		if _, ok := srvLookup(t.Name); ok {
			l.exposed = append(l.exposed, t)
			continue
		}
		if why, ok := hidden(t.Name); ok {
			l.skipped = append(l.skipped, skippedTool{t.Name, t.ToolName, t.File, why})
			continue
		}
		l.skipped = append(l.skipped, skippedTool{t.Name, t.ToolName, t.File,
			"refused by the server: a schema is not valid JSON Schema (tairseach-mcp validate says which)"})
	}
	for _, s := range reg.Skipped {
		l.skipped = append(l.skipped, skippedTool{s.Name, s.ToolName, s.File, skipReason(s)})
	}
	return l
}

// skipReason says in a few words why a tool is not exposed.
func skipReason(s manifest.Skipped) string {
	switch s.Reason {
	case manifest.Hidden:
		return "hidden: " + s.Detail
	case manifest.NoMethod:
		return "no method: " + s.Detail
	case manifest.Duplicate:
		return s.Detail // "duplicate of …"
	case manifest.Conflict:
		return "conflict: " + s.Detail
	case manifest.BadSchema:
		return "bad schema: " + s.Detail
	}
	return s.Reason.String() + ": " + s.Detail
}

func listTools(ctx context.Context, o *options, f toolsFlags, log zerolog.Logger, stdout, stderr io.Writer) (err error) {
	reg, err := o.loadManifests(log)
	if err != nil {
		return err
	}
	srv, done, err := o.openServer(ctx, reg, log)
	if err != nil {
		return err
	}
	defer done()
	switch {
	case f.budget:
		return printBudget(o, srv, stdout, stderr)
	case f.summary:
		return printSummary(o, reg, srv, stdout)
	}
	l := collectTools(reg, srv.Lookup, srv.Hidden)

	// Errors that leave nothing to serve fail the command; a listing that
	// is only short says so and succeeds.
	failed := noToolsError(o, reg, len(l.exposed)+hiddenCount(srv, reg))
	if failed == nil && (manifestErrors(reg) > 0 || len(l.exposed)+hiddenCount(srv, reg) < len(reg.Tools)) {
		fmt.Fprintln(stderr, "tairseach-mcp: some manifests or tools have errors; tairseach-mcp validate lists them")
	}
	if f.json {
		if err := printToolsJSON(o, l, f.all, srv.OutputSchemaUse, stdout); err != nil {
			return err
		}
		return failed
	}
	if len(l.exposed) == 0 && failed == nil {
		if n := hiddenCount(srv, reg); n > 0 {
			fmt.Fprintf(stderr, "tairseach-mcp: the flags hide all %d tools in %s (tools --all says which flag hides each)\n", n, o.manifests)
		} else {
			fmt.Fprintf(stderr, "tairseach-mcp: no tools in %s\n", o.manifests)
		}
	}
	defer func() {
		if err == nil {
			err = failed
		}
	}()
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	if len(l.exposed) > 0 {
		fmt.Fprintln(tw, "NAME\tMETHOD\tSOCKET\tFILE\tANNOTATIONS\tOUTPUT\tPERMISSION")
		g := srv.Grants()
		for _, t := range l.exposed {
			// A manifest's words, each on its cell (printable).
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.Name, printable(t.Method), printable(o.socketOf(t)), printable(t.File), hintFlags(t.Annotations),
				outputColumn(srv.OutputSchemaUse(t.Name)), printable(permissionColumn(t, g)))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	printed := false
	for _, t := range l.exposed {
		if u := srv.OutputSchemaUse(t.Name); u.Problem != "" {
			if !printed {
				fmt.Fprintln(stdout)
				printed = true
			}
			fmt.Fprintf(stdout, "%s: outputSchema untrusted: %s\n", t.Name, printable(u.Problem))
		}
	}
	if !f.all || len(l.skipped) == 0 {
		return nil
	}
	if len(l.exposed) > 0 {
		fmt.Fprintln(stdout)
	}
	tw = tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NOT EXPOSED\tTOOL\tFILE\tREASON")
	for _, s := range l.skipped {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.name, printable(s.toolName), printable(s.file), printable(s.reason))
	}
	return tw.Flush()
}

// noToolsError says why there is nothing to serve when the manifests'
// errors left no tool (served or hidden by the flags), else nil.
func noToolsError(o *options, reg *manifest.Registry, tools int) error {
	errs := manifestErrors(reg)
	switch {
	case tools > 0 || errs == 0:
		return nil
	case len(reg.Files) == 0:
		return fmt.Errorf("no tools: every manifest in %s failed to load (%s); tairseach-mcp validate says why",
			o.manifests, plural(len(reg.FileErrors), "file"))
	}
	return fmt.Errorf("no tools: the manifests in %s have %s and no tool loaded; tairseach-mcp validate lists them",
		o.manifests, plural(errs, "error"))
}

// permissionColumn is the PERMISSION column of a tool: each macOS
// permission it needs with its status ("screen_recording granted"), "?"
// for a status not read, "-" for none.
func permissionColumn(t manifest.Tool, g permissions.Grants) string {
	if len(t.Permissions) == 0 {
		return "-"
	}
	parts := make([]string, 0, len(t.Permissions))
	for _, p := range t.Permissions {
		st := "?"
		if g.Known() {
			st = string(g.Status(p))
		}
		parts = append(parts, p+" "+st)
	}
	return strings.Join(parts, ", ")
}

// socketOf is the backend socket a tool's calls go to.
func (o *options) socketOf(t manifest.Tool) string {
	if t.Socket != "" {
		return t.Socket
	}
	return o.socket
}

// outputColumn is the OUTPUT column of a tool.
func outputColumn(u mcpserver.OutputSchemaUse) string {
	switch {
	case u.Use == "":
		return "-"
	case u.Problem != "":
		return u.Use + ", untrusted"
	}
	return u.Use
}

func printToolsJSON(o *options, l toolListing, all bool, outputUse func(string) mcpserver.OutputSchemaUse, stdout io.Writer) error {
	out := make([]toolJSON, 0, len(l.exposed))
	for _, t := range l.exposed {
		j := toolJSON{
			Name: t.Name, ToolName: t.ToolName, Exposed: true, Method: t.Method, Socket: o.socketOf(t),
			File: t.File, ManifestID: t.ManifestID, Title: t.Title, Description: t.Description,
			TimeoutMs: t.TimeoutMs, Renamed: t.Renamed, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema,
		}
		u := outputUse(t.Name)
		j.OutputSchemaUse, j.OutputSchemaProblem = u.Use, u.Problem
		if a := t.Annotations; a != (manifest.Annotations{}) {
			j.Annotations = &annotations{a.Title, a.ReadOnlyHint, a.DestructiveHint, a.IdempotentHint, a.OpenWorldHint}
		}
		out = append(out, j)
	}
	if all {
		for _, s := range l.skipped {
			out = append(out, toolJSON{Name: s.name, ToolName: s.toolName, File: s.file, Reason: s.reason})
		}
	}
	return printJSON(stdout, out)
}

// hiddenCount is the number of reg's tools the policy hides.
func hiddenCount(srv *mcpserver.Server, reg *manifest.Registry) int {
	n := 0
	for _, t := range reg.Tools {
		if _, ok := srv.Hidden(t.Name); ok {
			n++
		}
	}
	return n
}
