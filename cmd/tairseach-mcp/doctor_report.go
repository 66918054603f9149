package main

// The doctor and how it reports: one line per check, OK, WARN or FAIL.
// The checks are doctor.go's, and permissions.go's for the macOS
// permissions.

import (
	"fmt"
	"io"

	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/mcpserver"
)

// doctor runs the checks and prints each result as it goes.
type doctor struct {
	o      *options
	log    zerolog.Logger
	out    io.Writer
	colour bool
	failed bool
	srv    *mcpserver.Server // as a client finds it; nil without manifests to serve
}

// Check outcomes.
const (
	statusOK   = "OK"
	statusWarn = "WARN"
	statusFail = "FAIL"
)

// report prints one check: its status, what was found and, when not OK,
// the fix (already part of what when fix is ""), each on one line with
// what could hide or rewrite what the user reads escaped (printable):
// they name paths, manifests' words and backends' errors.
func (d *doctor) report(status, what, fix string) {
	what, fix = printable(what), printable(fix)
	if status == statusFail {
		d.failed = true
	}
	label := fmt.Sprintf("%-4s", status)
	if d.colour {
		code := map[string]string{statusOK: "32", statusWarn: "33", statusFail: "31"}[status]
		label = "\x1b[" + code + "m" + label + "\x1b[0m"
	}
	line := label + "  " + what
	if fix != "" {
		line += "; fix: " + fix
	}
	fmt.Fprintln(d.out, line)
}

// detail prints an indented line under the last check.
func (d *doctor) detail(s string) { fmt.Fprintln(d.out, "      "+printable(s)) }
