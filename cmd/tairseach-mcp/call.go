package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/geilt/tairseach-mcp/internal/jsonscan"
	"github.com/geilt/tairseach-mcp/internal/quote"
	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver/backend"
	"github.com/geilt/tairseach-mcp/mcpserver/check"
)

type callFlags struct {
	raw     bool
	pretty  bool
	compact bool
}

func newCallCmd(o *options, stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	var f callFlags
	cmd := &cobra.Command{
		Use:   "call NAME [JSON | key=value...]",
		Short: "Call one tool, the way an MCP client's tools/call would",
		Long: `Call one tool, the way an MCP client's tools/call would, and print its result.

NAME is the MCP name (tairseach_contacts_list), the name without the prefix (contacts_list)
or the manifest's name (contacts.list). The arguments are one JSON object, "-" to read one
from stdin, or key=value pairs. A value is read as the type the tool's inputSchema gives
its property: id=123 is the string "123" where id is a string, the number where it is a
number; booleans are true or false; arrays and objects are JSON (quoted for the shell:
tags='["a","b"]'); null only where the schema allows it. Where the schema says nothing, a
value that parses as JSON is taken as that JSON, any other as a string. The arguments are
then checked against the inputSchema before the call.

The result's text is printed on stdout: JSON pretty-printed on a terminal and compact
otherwise (--pretty and --compact force either). Exit status 0 on success, 1 when the tool
returned an error (its text is still printed), 2 for an unknown tool or bad arguments.`,
		Example: `  tairseach-mcp call server.status
  tairseach-mcp call contacts.search query=anna limit=5
  tairseach-mcp call tairseach_contacts_list '{"limit": 2, "offset": 10}'
  echo '{"id": "c-001"}' | tairseach-mcp call contacts.get -
  tairseach-mcp call --raw contacts.get id=c-001`,
		Args: callArgs,
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return completeToolNames(o, cmd, toComplete), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.pretty && f.compact {
				return usageError{errors.New("--pretty and --compact exclude each other; pass one")}
			}
			return runCall(cmd, o, f, args[0], args[1:], stdin, stdout, stderr)
		},
	}
	cmd.Flags().BoolVar(&f.raw, "raw", false, "print the CallToolResult as MCP sends it")
	cmd.Flags().BoolVar(&f.pretty, "pretty", false, "pretty-print JSON even when stdout is not a terminal")
	cmd.Flags().BoolVar(&f.compact, "compact", false, "print JSON compact even on a terminal")
	return cmd
}

// completeToolNames completes a tool name in the form being typed: the MCP
// name (tairseach_contacts_l), the name without the prefix (contacts_l) or
// the manifest's name (contacts.l). An empty word gets the MCP names.
func completeToolNames(o *options, cmd *cobra.Command, toComplete string) []string {
	if o.resolve(cmd) != nil {
		return nil
	}
	reg, err := o.loadManifests(zerolog.Nop())
	if err != nil {
		return nil
	}
	var names []string
	add := func(n string) {
		if strings.HasPrefix(n, toComplete) && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for _, t := range reg.Tools {
		if o.policy.Hides(t) != "" {
			continue
		}
		add(t.Name)
		if toComplete != "" {
			add(strings.TrimPrefix(t.Name, o.prefix))
			add(t.ToolName)
		}
	}
	return names
}

func runCall(cmd *cobra.Command, o *options, f callFlags, name string, argv []string, stdin io.Reader, stdout, stderr io.Writer) error {
	log := o.cliLogger(cmd, stderr)
	reg, err := o.loadManifests(log)
	if err != nil {
		return err
	}
	srv, done, err := o.openServer(cmd.Context(), reg, log)
	if err != nil {
		return err
	}
	defer done()

	tool, ok := findTool(reg, o.prefix, name)
	if !ok {
		return usageError{unknownToolError(reg, o.prefix, name)}
	}
	args, err := buildArgs(argv, stdin, tool.InputSchema)
	if err != nil {
		return usageError{err}
	}

	// The call takes the pipeline of every request: the policy and the
	// argument check refuse it there, with the words a client gets.
	res, refused := srv.CallTool(cmd.Context(), tool.Name, args)
	if res == nil {
		return fmt.Errorf("%s: interrupted before the result arrived", tool.Name)
	}
	if refused != nil && refused.Rule.Input != backend.NotInput {
		// The command line's fault, not the tool's: a usage error.
		why := check.ResultText(res)
		if refused.Rule.Input == backend.InputSchema {
			why += describeParams(tool.InputSchema)
		}
		return usageError{errors.New(why)}
	}
	if res.IsError && !f.raw {
		// Said once, on stderr; stdout stays empty. --raw prints the whole
		// result on stdout instead, the error in it.
		hint := ""
		if !isBackendError(res) {
			hint = " (tairseach-mcp doctor checks the setup)"
		}
		fmt.Fprintf(stderr, "tairseach-mcp: %s failed: %s%s\n", tool.Name, errorSummary(res), hint)
		return errReported
	}
	pretty := f.pretty || (!f.compact && isTerminal(stdout))
	if err := printResult(res, f.raw, pretty, stdout, stderr); err != nil {
		return err
	}
	if res.IsError {
		return errReported
	}
	return nil
}

// buildArgs makes the arguments object from the command line: one JSON
// object, "-" for one on stdin, or key=value pairs, each value read as the
// type the tool's inputSchema gives its property.
func buildArgs(argv []string, stdin io.Reader, schema json.RawMessage) (json.RawMessage, error) {
	if len(argv) == 1 {
		a := strings.TrimSpace(argv[0])
		if a == "-" {
			b, err := io.ReadAll(stdin)
			if err != nil {
				return nil, fmt.Errorf("reading the arguments from stdin: %w", err)
			}
			a = strings.TrimSpace(string(b))
		}
		if strings.HasPrefix(a, "{") || argv[0] == "-" {
			var obj map[string]json.RawMessage
			if err := json.Unmarshal([]byte(a), &obj); err != nil || obj == nil {
				return nil, fmt.Errorf("arguments are not a JSON object: %s (quote the object for the shell, or use key=value pairs)", describeJSONError(err))
			}
			var buf bytes.Buffer
			_ = json.Compact(&buf, []byte(a))
			return buf.Bytes(), nil
		}
	}
	var s jsonschema.Schema
	if len(schema) > 0 && json.Unmarshal(schema, &s) != nil {
		s = jsonschema.Schema{} // no types to go by
	}
	buf := []byte{'{'}
	seen := map[string]bool{}
	for i, kv := range argv {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("argument %s is not key=value; pass key=value pairs or one JSON object", quote.Line(kv, quote.Text))
		}
		if seen[k] {
			return nil, fmt.Errorf("argument %s given twice", quote.IdentLine(k, quote.Name))
		}
		seen[k] = true
		val, err := argValue(k, v, s.Properties[k])
		if err != nil {
			return nil, err
		}
		if i > 0 {
			buf = append(buf, ',')
		}
		kb, _ := json.Marshal(k)
		buf = append(buf, kb...)
		buf = append(buf, ':')
		buf = append(buf, val...)
	}
	return append(buf, '}'), nil
}

// argValue is the JSON value of k=v for property schema p: v as JSON when
// it is JSON of a type p allows, else v as a string when p allows strings.
// Without types to go by, v is JSON if it parses as JSON, else a string.
func argValue(k, v string, p *jsonschema.Schema) ([]byte, error) {
	var types []string
	if p != nil {
		types = p.Types
		if p.Type != "" {
			types = []string{p.Type}
		}
	}
	allows := func(t string) bool { return len(types) == 0 || slices.Contains(types, t) }
	if kind := jsonKind(v); kind != "" {
		integral := kind == "number" && isIntegral(v)
		if allows(kind) || kind == "number" && integral && allows("integer") {
			var buf bytes.Buffer
			_ = json.Compact(&buf, []byte(v))
			return buf.Bytes(), nil
		}
		if kind == "number" && allows("integer") && !allows("string") {
			return nil, fmt.Errorf("%s=%s: %s is an integer; give a whole number, such as %s=10", k, v, k, k)
		}
	}
	if allows("string") {
		b, _ := json.Marshal(v)
		return b, nil
	}
	return nil, fmt.Errorf("%s=%s: %s is %s; %s", k, v, k, check.DescribeTypes(types), typeHint(k, types))
}

// jsonKind is the JSON Schema type of v when v is one JSON value, else "".
func jsonKind(v string) string {
	if !json.Valid([]byte(v)) {
		return ""
	}
	return jsonscan.Kind([]byte(v))
}

func isIntegral(v string) bool {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	return err == nil && f == math.Trunc(f)
}

// typeHint shows how to write a value of the first of types.
func typeHint(k string, types []string) string {
	switch types[0] {
	case "integer":
		return fmt.Sprintf("give a whole number, such as %s=10", k)
	case "number":
		return fmt.Sprintf("give a number, such as %s=1.5", k)
	case "boolean":
		return fmt.Sprintf("give %s=true or %s=false", k, k)
	case "array":
		return fmt.Sprintf(`give it as JSON, quoted for the shell: %s='["a","b"]'`, k)
	case "object":
		return fmt.Sprintf(`give it as JSON, quoted for the shell: %s='{"key":"value"}'`, k)
	case "null":
		return fmt.Sprintf("give %s=null or leave it out", k)
	}
	return "see tairseach-mcp tools --all"
}

func describeJSONError(err error) string {
	if err == nil {
		return "got null"
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return "got a JSON " + te.Value
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// findTool looks name up as an MCP name, then with the prefix, then as a
// manifest tool name, among every tool of the registry: which of them the
// flags serve is the server's to say when it is called.
func findTool(reg *manifest.Registry, prefix, name string) (manifest.Tool, bool) {
	mcpName, _ := manifest.MCPName(prefix, name)
	for _, n := range []string{name, prefix + name, mcpName} {
		for _, t := range reg.Tools {
			if t.Name == n {
				return t, true
			}
		}
	}
	for _, t := range reg.Tools {
		if t.ToolName == name {
			return t, true
		}
	}
	return manifest.Tool{}, false
}

// unknownToolError names the closest tools.
func unknownToolError(reg *manifest.Registry, prefix, name string) error {
	want := strings.ToLower(strings.TrimPrefix(name, prefix))
	want = strings.NewReplacer(".", "_", "-", "_").Replace(want)
	type cand struct {
		name string
		dist int
	}
	var cands []cand
	for _, t := range reg.Tools {
		short := strings.ToLower(strings.TrimPrefix(t.Name, prefix))
		d := editDistance(want, short)
		if d <= max(2, len(want)/3) || (len(want) >= 3 && strings.Contains(short, want)) {
			cands = append(cands, cand{t.Name, d})
		}
	}
	slices.SortStableFunc(cands, func(a, b cand) int { return a.dist - b.dist })
	var names []string
	for _, c := range cands[:min(len(cands), 5)] {
		names = append(names, c.name)
	}
	if len(names) == 0 {
		return fmt.Errorf("unknown tool %s; tairseach-mcp tools lists them", quote.IdentLine(name, quote.Name))
	}
	return fmt.Errorf("unknown tool %s; did you mean %s? (tairseach-mcp tools lists them all)", quote.IdentLine(name, quote.Name), strings.Join(names, ", "))
}

// describeParams lists a tool's top-level arguments as a hint:
// "; it takes query (string, required), limit (integer)".
func describeParams(schema json.RawMessage) string {
	var s jsonschema.Schema
	if json.Unmarshal(schema, &s) != nil {
		return ""
	}
	if len(s.Properties) == 0 {
		return "; it takes no arguments"
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	slices.SortStableFunc(names, func(a, b string) int {
		ra, rb := slices.Contains(s.Required, a), slices.Contains(s.Required, b)
		switch {
		case ra && !rb:
			return -1
		case rb && !ra:
			return 1
		}
		return 0
	})
	var parts []string
	for _, n := range names {
		p := s.Properties[n]
		var attrs []string
		if p != nil && p.Type != "" {
			attrs = append(attrs, p.Type)
		} else if p != nil && len(p.Types) > 0 {
			attrs = append(attrs, strings.Join(p.Types, "|"))
		}
		if slices.Contains(s.Required, n) {
			attrs = append(attrs, "required")
		}
		if len(attrs) > 0 {
			n += " (" + strings.Join(attrs, ", ") + ")"
		}
		parts = append(parts, n)
	}
	return "; it takes " + strings.Join(parts, ", ")
}

// printResult prints the text content of res, or with raw all of res as
// JSON. JSON text is indented when pretty.
func printResult(res *mcp.CallToolResult, raw, pretty bool, stdout, stderr io.Writer) error {
	if raw {
		b, err := json.Marshal(res)
		if err != nil {
			return fmt.Errorf("encoding the result: %w", err)
		}
		_, err = fmt.Fprintf(stdout, "%s\n", formatJSON(b, pretty))
		return err
	}
	other := 0
	for _, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok {
			other++
			continue
		}
		text := []byte(tc.Text)
		if json.Valid(text) {
			text = formatJSON(text, pretty)
		}
		if _, err := fmt.Fprintf(stdout, "%s\n", bytes.TrimRight(text, "\n")); err != nil {
			return err
		}
	}
	if other > 0 {
		fmt.Fprintf(stderr, "tairseach-mcp: %s not shown; --raw shows the whole result\n", plural(other, "non-text content item"))
	}
	return nil
}

func formatJSON(b []byte, pretty bool) []byte {
	var buf bytes.Buffer
	var err error
	if pretty {
		err = json.Indent(&buf, b, "", "  ")
	} else {
		err = json.Compact(&buf, b)
	}
	if err != nil {
		return b
	}
	return buf.Bytes()
}

// callArgs are call's positional arguments: a tool, then its arguments.
func callArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return usageError{errors.New("usage: tairseach-mcp call NAME [JSON | key=value...]; name the tool to call (tairseach-mcp tools lists them)")}
	}
	return nil
}
