package main

import (
	"fmt"
	"io"
	"os"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
)

// stdinIsTerminal reports whether stdin is a terminal: someone ran the
// server by hand rather than an MCP client starting it.
var stdinIsTerminal = func(stdin io.Reader) bool {
	f, ok := stdin.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// greetTerminal says in one line what a bare start on a terminal is doing,
// in place of the start-up log lines (kept at --log-level info or lower
// when asked for explicitly).
func greetTerminal(cmd *cobra.Command, o *options, stderr io.Writer) {
	fmt.Fprintln(stderr, "tairseach-mcp: an MCP server, waiting for an MCP client on stdin (Ctrl-C quits); "+
		"try: tairseach-mcp tools, tairseach-mcp install claude-desktop")
	if !cmd.Flags().Changed("log-level") && os.Getenv(envName("log-level")) == "" && o.logLevel == "info" {
		o.logLevel = "warn"
	}
}
