package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/geilt/tairseach-mcp/manifest"
)

type validateFlags struct {
	json    bool
	verbose bool
}

func newValidateCmd(o *options, stdout, stderr io.Writer) *cobra.Command {
	var f validateFlags
	cmd := &cobra.Command{
		Use:   "validate [DIR|FILE...]",
		Short: "Check manifests and report problems like a compiler",
		Long: `Check manifests and report each problem as path:line:col: severity: message.

With no arguments it checks the --manifests directory. A DIR is loaded the way the server
loads it; FILE arguments are checked together, as if they were the only manifests.

Manifests of the three implementation types are understood: internal (tools mapped to socket
methods by implementation.methods), script and proxy (tools bound by implementation.toolBindings,
called under their tool name).

Errors: invalid JSON, missing or mistyped fields, an unknown implementation.type, an inputSchema
that is not an object schema, an inputSchema or outputSchema that is not valid JSON Schema or
cannot be validated safely (a $ref cycle, a remote $ref, an unknown type name, a pattern that
does not compile, nesting deeper than 64). Warnings: a tool without a method or binding, a method
or binding without a tool, duplicate and conflicting tool names, duplicate manifest ids. Infos
(shown with -v): names rewritten for MCP (contacts.list → tairseach_contacts_list) or cut to
64 characters, tools hidden by mcp_expose.

The summary goes to stderr. Exit status 1 when there is an error, else 0.`,
		Example: `  tairseach-mcp validate
  tairseach-mcp validate ./manifests.example
  tairseach-mcp validate core/contacts.json core/calendar.json
  tairseach-mcp validate --json | jq '.findings[] | select(.severity == "error")'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			rep := validateManifests(o, args, o.cliLogger(cmd, stderr))
			if err := rep.print(f, stdout, stderr); err != nil {
				return err
			}
			if rep.Errors > 0 {
				return exitCode(1)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&f.json, "json", false, "print the findings and counts as one JSON object")
	cmd.Flags().BoolVarP(&f.verbose, "verbose", "v", false, "also print infos")
	return cmd
}

// Severities of findings, from the manifest package's plus info.
const (
	sevError   = "error"
	sevWarning = "warning"
	sevInfo    = "info"
)

// finding is one diagnostic. Line and Column are 1-based, 0 when unknown.
type finding struct {
	File     string `json:"file"`
	Line     int    `json:"line,omitempty"`
	Column   int    `json:"column,omitempty"`
	Severity string `json:"severity"`
	Tool     string `json:"tool,omitempty"`
	Message  string `json:"message"`

	duplicate bool // a tool left out as a duplicate of another's method
}

func (f finding) String() string {
	if f.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: %s: %s", printable(f.File), f.Line, f.Column, f.Severity, printable(f.Message))
	}
	return fmt.Sprintf("%s: %s: %s", printable(f.File), f.Severity, printable(f.Message))
}

// printable escapes control characters and invalid UTF-8, which come from
// manifests (tool names, file names) and must not reach a terminal as they
// are: an escape sequence could rewrite what the user reads.
func printable(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) || r == utf8.RuneError }) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unicode.IsControl(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// report is the outcome of validate, also its --json form.
type report struct {
	Files    int       `json:"files"`
	Tools    int       `json:"tools"`
	Errors   int       `json:"errors"`
	Warnings int       `json:"warnings"`
	Infos    int       `json:"infos"`
	Findings []finding `json:"findings"`
}

func (r *report) add(f finding) {
	switch f.Severity {
	case sevError:
		r.Errors++
	case sevWarning:
		r.Warnings++
	default:
		r.Infos++
	}
	r.Findings = append(r.Findings, f)
}

// summary is the last line: "23 files, 91 tools, 0 errors, 16 warnings".
func (r *report) summary(showInfos bool) string {
	s := fmt.Sprintf("%s, %s, %s, %s", plural(r.Files, "file"), plural(r.Tools, "tool"), plural(r.Errors, "error"), plural(r.Warnings, "warning"))
	if r.Infos > 0 {
		s += ", " + plural(r.Infos, "info")
		if !showInfos {
			s += " (-v shows them)"
		}
	}
	return s
}

func (r *report) print(f validateFlags, stdout, stderr io.Writer) error {
	if f.json {
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(stdout, "%s\n", b); err != nil {
			return err
		}
	} else {
		for _, x := range r.Findings {
			if x.Severity == sevInfo && !f.verbose {
				continue
			}
			if _, err := fmt.Fprintln(stdout, x); err != nil {
				return err
			}
		}
	}
	_, err := fmt.Fprintln(stderr, r.summary(f.verbose || f.json))
	return err
}

// validateManifests checks the given directories and files, or the
// --manifests directory when there are none. Directories are loaded one by
// one with manifest.Load; the files together, with ParseFile and Build.
func validateManifests(o *options, args []string, log zerolog.Logger) *report {
	rep := &report{Findings: []finding{}}
	opts := o.loadOptions(log)
	if len(args) == 0 {
		if _, err := os.Stat(o.manifests); errors.Is(err, fs.ErrNotExist) {
			rep.add(finding{File: o.manifests, Severity: sevError,
				Message: "manifests directory does not exist (create it, or pass --manifests / set TAIRSEACH_MANIFESTS)"})
			return rep
		}
		args = []string{o.manifests}
	}
	var files []string
	for _, a := range args {
		fi, err := os.Stat(a)
		switch {
		case err != nil:
			rep.add(finding{File: a, Severity: sevError, Message: describeOSError(err)})
		case fi.IsDir():
			validateDir(rep, a, opts)
		default:
			files = append(files, a)
		}
	}
	if len(files) > 0 {
		validateFiles(rep, files, opts)
	}
	slices.SortStableFunc(rep.Findings, func(a, b finding) int {
		return cmp.Or(strings.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	return rep
}

func validateDir(rep *report, dir string, opts manifest.Options) {
	reg, err := manifest.Load(dir, opts)
	if err != nil {
		rep.add(finding{File: dir, Severity: sevError, Message: describeOSError(err)})
		return
	}
	c := &checker{rep: rep, prefix: opts.Prefix, locs: map[string]*locator{}, path: func(rel string) string {
		return filepath.Join(dir, filepath.FromSlash(rel))
	}}
	c.check(reg)
}

func validateFiles(rep *report, paths []string, opts manifest.Options) {
	var (
		files []*manifest.File
		errs  []*manifest.FileError
	)
	for _, p := range paths {
		rel := filepath.ToSlash(p)
		data, err := manifest.ReadFile(p, opts)
		if err != nil {
			errs = append(errs, &manifest.FileError{Path: rel, Err: errors.New(describeOSError(err))})
			continue
		}
		f, err := manifest.ParseFile(rel, data, opts)
		if err != nil {
			var fe *manifest.FileError
			if !errors.As(err, &fe) {
				fe = &manifest.FileError{Path: rel, Err: err}
			}
			errs = append(errs, fe)
			continue
		}
		files = append(files, f)
	}
	reg := manifest.Build(files)
	reg.FileErrors = errs
	c := &checker{rep: rep, prefix: opts.Prefix, locs: map[string]*locator{}, path: filepath.FromSlash}
	c.check(reg)
}

// describeOSError is err without the Go operation names: "no such file or
// directory" rather than "stat x: no such file or directory".
func describeOSError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// checker turns a registry into findings with positions.
type checker struct {
	rep    *report
	prefix string
	path   func(rel string) string // file name to show and read, from a manifest-relative path
	locs   map[string]*locator     // by relative path
}

func (c *checker) check(reg *manifest.Registry) {
	c.rep.Files += len(reg.Files) + len(reg.FileErrors)
	c.rep.Tools += len(reg.Tools)

	for _, fe := range reg.FileErrors {
		c.rep.add(finding{File: c.path(fe.Path), Line: fe.Line, Column: fe.Column, Severity: sevError, Message: fe.Err.Error()})
	}
	for _, p := range reg.Problems {
		sev := sevWarning
		if p.Severity == manifest.Error {
			sev = sevError
		}
		f := finding{File: c.path(p.File), Severity: sev, Tool: p.Tool, Message: p.Message}
		loc := c.locator(p.File)
		switch {
		case p.Tool != "":
			field := "name"
			for _, k := range []string{"inputSchema", "outputSchema", "timeoutMs"} {
				if strings.Contains(p.Message, k) {
					field = k
					break
				}
			}
			var ok bool
			if sub, found := schemaPointer(p.Message); found && strings.HasSuffix(field, "Schema") {
				// Point into the schema, where the check found the problem.
				f.Line, f.Column, ok = loc.toolValue(p.Tool, field+sub)
			}
			if !ok {
				f.Line, f.Column, ok = loc.tool(p.Tool, field)
			}
			if !ok {
				// A method mapping or tool binding without a tool: point at its key.
				if f.Line, f.Column, ok = loc.key("/implementation/methods/" + p.Tool); !ok {
					f.Line, f.Column, _ = loc.key("/implementation/toolBindings/" + p.Tool)
				}
			}
		case strings.HasPrefix(p.Message, "manifest id"):
			f.Line, f.Column, _ = loc.value("/id")
		case strings.HasPrefix(p.Message, "implementation.toolBindings"):
			f.Line, f.Column, _ = loc.key("/implementation/toolBindings")
		}
		c.rep.add(f)
	}
	for _, s := range reg.Skipped {
		f := finding{File: c.path(s.File), Tool: s.ToolName}
		switch s.Reason {
		case manifest.Duplicate:
			f.Severity, f.duplicate = sevWarning, true
			f.Message = fmt.Sprintf("tool %s is not exposed: %s, which calls the same method", s.ToolName, s.Detail)
		case manifest.Hidden:
			f.Severity = sevInfo
			f.Message = fmt.Sprintf("tool %s is not exposed: %s", s.ToolName, s.Detail)
		default:
			continue // the manifest package reported it as a Problem
		}
		f.Line, f.Column, _ = c.locator(s.File).tool(s.ToolName, "name")
		c.rep.add(f)
	}
	for _, t := range reg.Tools {
		loc := c.locator(t.File)
		if t.Renamed {
			f := finding{File: c.path(t.File), Severity: sevInfo, Tool: t.ToolName,
				Message: fmt.Sprintf("tool %s is exposed as %s", t.ToolName, t.Name)}
			if utf8.RuneCountInString(c.prefix+t.ToolName) > manifest.MaxNameLen {
				f.Message += fmt.Sprintf(" (cut to %d characters)", manifest.MaxNameLen)
			}
			f.Line, f.Column, _ = loc.tool(t.ToolName, "name")
			c.rep.add(f)
		}
	}
}

// locator returns the position index of a manifest, read on first use.
func (c *checker) locator(rel string) *locator {
	if l, ok := c.locs[rel]; ok {
		return l
	}
	var l *locator
	name := c.path(rel)
	// The file is read again, as the loader reads it: it may have been
	// replaced by a FIFO since, which must not block.
	if data, err := manifest.ReadFile(name, manifest.Options{}); err == nil {
		l = newLocator(data)
	}
	c.locs[rel] = l
	return l
}

// locator finds where things are in a manifest, to give findings a line
// and column. It indexes values by JSON Pointer to a depth of four, which
// reaches /tools/N/inputSchema and /implementation/methods/KEY. A nil
// locator (a file that could not be read) knows no positions.
type locator struct {
	data   []byte
	base   int64            // bytes stripped from the start (a byte order mark)
	values map[string]int64 // pointer → offset of the value
	keys   map[string]int64 // pointer → offset of the member's key
	tools  map[string]int   // tool name → index of its first entry in /tools
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

func newLocator(data []byte) *locator {
	l := &locator{data: data, values: map[string]int64{}, keys: map[string]int64{}, tools: map[string]int{}}
	body := data
	if bytes.HasPrefix(body, utf8BOM) {
		body = body[len(utf8BOM):]
		l.base = int64(len(utf8BOM))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	_ = l.walk(dec, body, "", 0) // positions found before an error are kept
	return l
}

func (l *locator) walk(dec *json.Decoder, body []byte, ptr string, depth int) error {
	l.values[ptr] = skipSeparators(body, dec.InputOffset()) + l.base
	if depth == 4 && !inSchema(ptr) || depth == maxLocatorDepth {
		var skip json.RawMessage
		return dec.Decode(&skip)
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		for dec.More() {
			off := skipSeparators(body, dec.InputOffset()) + l.base
			k, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ := k.(string)
			child := ptr + "/" + key
			l.keys[child] = off
			if err := l.walk(dec, body, child, depth+1); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if err := l.walk(dec, body, ptr+"/"+strconv.Itoa(i), depth+1); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	}
	if name, ok := tok.(string); ok && depth == 3 && strings.HasPrefix(ptr, "/tools/") && strings.HasSuffix(ptr, "/name") {
		if i, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(ptr, "/tools/"), "/name")); err == nil {
			if _, seen := l.tools[name]; !seen {
				l.tools[name] = i
			}
		}
	}
	return nil
}

// maxLocatorDepth bounds how deep the locator indexes a tool's schemas:
// deeper than the manifest package accepts them.
const maxLocatorDepth = 4 + 2*manifest.MaxSchemaDepth + 2

// inSchema reports whether ptr is inside a tool's inputSchema or
// outputSchema, which the locator indexes deeper than the rest.
func inSchema(ptr string) bool {
	parts := strings.SplitN(ptr, "/", 5) // "", "tools", N, field, rest
	return len(parts) == 5 && parts[1] == "tools" && (parts[3] == "inputSchema" || parts[3] == "outputSchema")
}

// schemaPointer returns the JSON Pointer in a message about a schema
// ("… cannot be used: at /properties/n: …"), unescaped the way the locator
// spells pointers.
func schemaPointer(msg string) (string, bool) {
	_, rest, ok := strings.Cut(msg, "cannot be used: at /")
	if !ok {
		return "", false
	}
	ptr, _, ok := strings.Cut(rest, ": ")
	if !ok {
		return "", false
	}
	return "/" + strings.NewReplacer("~1", "/", "~0", "~").Replace(ptr), true
}

// skipSeparators returns the offset of the next value at or after off.
func skipSeparators(b []byte, off int64) int64 {
	for off < int64(len(b)) && strings.IndexByte(" \t\r\n,:", b[off]) >= 0 {
		off++
	}
	return off
}

// value returns the position of the value at pointer ptr.
func (l *locator) value(ptr string) (line, col int, ok bool) {
	if l == nil {
		return 0, 0, false
	}
	off, ok := l.values[ptr]
	if !ok {
		return 0, 0, false
	}
	line, col = lineCol(l.data, off)
	return line, col, true
}

// key returns the position of the key of the member at pointer ptr.
func (l *locator) key(ptr string) (line, col int, ok bool) {
	if l == nil {
		return 0, 0, false
	}
	off, ok := l.keys[ptr]
	if !ok {
		return 0, 0, false
	}
	line, col = lineCol(l.data, off)
	return line, col, true
}

// toolValue returns the position of the value at path below the first tool
// named name, e.g. "inputSchema/properties/n".
func (l *locator) toolValue(name, path string) (line, col int, ok bool) {
	if l == nil {
		return 0, 0, false
	}
	i, ok := l.tools[name]
	if !ok {
		return 0, 0, false
	}
	return l.value("/tools/" + strconv.Itoa(i) + "/" + path)
}

// tool returns the position of field in the first tool named name, or of
// the tool itself when it has no such field.
func (l *locator) tool(name, field string) (line, col int, ok bool) {
	if l == nil {
		return 0, 0, false
	}
	i, ok := l.tools[name]
	if !ok {
		return 0, 0, false
	}
	ptr := "/tools/" + strconv.Itoa(i)
	if line, col, ok = l.value(ptr + "/" + field); ok {
		return line, col, ok
	}
	return l.value(ptr)
}

// lineCol converts a byte offset into a 1-based line and byte column.
func lineCol(data []byte, off int64) (line, col int) {
	off = max(0, min(off, int64(len(data))))
	before := data[:off]
	return 1 + bytes.Count(before, []byte{'\n'}), int(off) - bytes.LastIndexByte(before, '\n')
}
