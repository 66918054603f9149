package main

// Helpers shared by the inspection commands (tools, validate, call, doctor,
// prompts, resources): terminal detection and colour, their JSON, and the
// compact form of a tool's annotations. The server they open is open.go's.

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mattn/go-isatty"

	"github.com/geilt/tairseach-mcp/manifest"
)

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// useColour reports whether output to w may be coloured: w is a terminal
// and NO_COLOR is not set.
func useColour(w io.Writer) bool {
	return isTerminal(w) && os.Getenv("NO_COLOR") == ""
}

// manifestErrors counts what stops manifests or tools from loading.
func manifestErrors(reg *manifest.Registry) int {
	n := len(reg.FileErrors)
	for _, p := range reg.Problems {
		if p.Severity == manifest.Error {
			n++
		}
	}
	return n
}

// hintFlags is the compact form of annotations: a hint set to true is shown
// by its short name (ro, idem, destr, open), one set to false as !name, and
// one absent not at all. "-" when none is set.
func hintFlags(a manifest.Annotations) string {
	var parts []string
	for _, h := range []struct {
		name string
		v    *bool
	}{
		{"ro", a.ReadOnlyHint},
		{"idem", a.IdempotentHint},
		{"destr", a.DestructiveHint},
		{"open", a.OpenWorldHint},
	} {
		switch {
		case h.v == nil:
		case *h.v:
			parts = append(parts, h.name)
		default:
			parts = append(parts, "!"+h.name)
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

// plural returns "n thing" or "n things".
func plural(n int, thing string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, thing)
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// printJSON prints v as indented JSON and a newline: every command's --json.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
