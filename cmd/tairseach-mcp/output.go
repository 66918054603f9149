package main

// Helpers shared by the inspection commands (tools, validate, call, doctor,
// prompts, resources): loading the manifests quietly, opening the server
// on them, terminal detection and colour, and the compact form of a
// tool's annotations.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver"
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

// cliLogger is the logger of the inspection commands. They report what
// matters themselves, so the loader's logs are shown only when the log level
// was asked for by flag or environment.
func (o *options) cliLogger(cmd *cobra.Command, stderr io.Writer) zerolog.Logger {
	if cmd.Flags().Changed("log-level") || os.Getenv(envName("log-level")) != "" {
		return o.newLogger(stderr)
	}
	return zerolog.Nop()
}

// errNoManifests is returned when the manifests directory does not exist.
var errNoManifests = errors.New("manifests directory does not exist")

// loadManifests loads the --manifests directory as serve does. A missing
// directory is an error here: the commands that inspect it have nothing
// to show.
func (o *options) loadManifests(log zerolog.Logger) (*manifest.Registry, error) {
	reg, err := manifest.Load(o.manifests, o.loadOptions(log))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w: %s (create it, or pass --manifests / set TAIRSEACH_MANIFESTS)", errNoManifests, o.manifests)
	case err != nil:
		return nil, fmt.Errorf("%v (check --manifests / TAIRSEACH_MANIFESTS)", err)
	}
	return reg, nil
}

// openServer opens the server serve would run on reg, without a
// transport, as a client finds it: the --toolsets names checked, and the
// macOS permissions read once where the flags leave out what is not
// granted. What the commands (call, tools, doctor, prompts, resources)
// list, call and check through it is what a client would be offered. The
// caller closes it.
func (o *options) openServer(ctx context.Context, reg *manifest.Registry, log zerolog.Logger) (*mcpserver.Server, error) {
	// An unknown toolset is a mistake in the command line, as serve says.
	if err := o.checkToolsets(reg); err != nil {
		return nil, err
	}
	srv, _ := o.newServer(reg, log, observers{})
	if o.hideUngranted {
		// An app that does not answer leaves them unknown: nothing is left
		// out, as a client is offered everything until they are read.
		rctx, cancel := context.WithTimeout(ctx, grantsTimeout)
		defer cancel()
		_, _ = srv.ReadPermissions(rctx)
	}
	return srv, nil
}

// grantsTimeout bounds the commands' read of the macOS permissions: as
// long as a client's first list waits for them.
const grantsTimeout = 3 * time.Second

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
