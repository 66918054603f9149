package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
				return errReported
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

// validation is the outcome of validate, also its --json form.
type validation struct {
	Files    int       `json:"files"`
	Tools    int       `json:"tools"`
	Errors   int       `json:"errors"`
	Warnings int       `json:"warnings"`
	Infos    int       `json:"infos"`
	Findings []finding `json:"findings"`
}

func (r *validation) add(f finding) {
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
func (r *validation) summary(showInfos bool) string {
	s := fmt.Sprintf("%s, %s, %s, %s", plural(r.Files, "file"), plural(r.Tools, "tool"), plural(r.Errors, "error"), plural(r.Warnings, "warning"))
	if r.Infos > 0 {
		s += ", " + plural(r.Infos, "info")
		if !showInfos {
			s += " (-v shows them)"
		}
	}
	return s
}

func (r *validation) print(f validateFlags, stdout, stderr io.Writer) error {
	if f.json {
		if err := printJSON(stdout, r); err != nil {
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
func validateManifests(o *options, args []string, log zerolog.Logger) *validation {
	rep := &validation{Findings: []finding{}}
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

func validateDir(rep *validation, dir string, opts manifest.Options) {
	reg, err := manifest.Load(dir, opts)
	if err != nil {
		rep.add(finding{File: dir, Severity: sevError, Message: describeOSError(err)})
		return
	}
	c := &checker{rep: rep, prefix: opts.Prefix, path: func(rel string) string {
		return filepath.Join(dir, filepath.FromSlash(rel))
	}}
	c.check(reg)
}

func validateFiles(rep *validation, paths []string, opts manifest.Options) {
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
	c := &checker{rep: rep, prefix: opts.Prefix, path: filepath.FromSlash}
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

// checker turns a registry into findings, at the positions the manifest
// package gives them.
type checker struct {
	rep    *validation
	prefix string
	path   func(rel string) string // file name to show, from a manifest-relative path
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
		c.rep.add(finding{File: c.path(p.File), Line: p.Line, Column: p.Column, Severity: sev, Tool: p.Tool, Message: p.Message})
	}
	for _, s := range reg.Skipped {
		f := finding{File: c.path(s.File), Line: s.Line, Column: s.Column, Tool: s.ToolName}
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
		c.rep.add(f)
	}
	for _, t := range reg.Tools {
		if t.Renamed {
			at := reg.Position(t.Name)
			f := finding{File: c.path(t.File), Line: at.Line, Column: at.Column, Severity: sevInfo, Tool: t.ToolName,
				Message: fmt.Sprintf("tool %s is exposed as %s", t.ToolName, t.Name)}
			if utf8.RuneCountInString(c.prefix+t.ToolName) > manifest.MaxNameLen {
				f.Message += fmt.Sprintf(" (cut to %d characters)", manifest.MaxNameLen)
			}
			c.rep.add(f)
		}
	}
}
