package main

import (
	"fmt"
	"io"
	"os"

	"github.com/mattn/go-isatty"
)

// stdinIsTerminal reports whether stdin is a terminal: someone ran the
// server by hand rather than an MCP client starting it.
var stdinIsTerminal = func(stdin io.Reader) bool {
	f, ok := stdin.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// greetTerminal says in one line what a bare start on a terminal is doing;
// the start-up log lines show at --log-level info.
func greetTerminal(stderr io.Writer) {
	fmt.Fprintln(stderr, "tairseach-mcp: an MCP server, waiting for an MCP client on stdin (Ctrl-C quits); "+
		"try: tairseach-mcp tools, tairseach-mcp install claude-desktop")
}
