package main

// How a command ends: the errors the commands return, and the one place
// that turns them into the process's exit code.

import (
	"errors"
	"fmt"
	"io"
)

// usageError marks errors in how the command was called (exit code 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// errReported is returned by a command that failed and has said why
// already: call's tool error, validate's and doctor's findings, the calls
// a second stop signal cut off.
var errReported = errors.New("failed, as reported")

// exitStatus is the one place that decides how a command ends: 0 without
// an error, 2 for a command line it cannot take (a usageError), 1 for any
// other failure. The error is said on stderr, unless the command said it,
// with what could hide or rewrite what the user reads escaped (the
// words of a command line a client's file holds, cobra's and pflag's
// messages included).
func exitStatus(err error, stderr io.Writer) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errReported):
		return 1
	}
	fmt.Fprintf(stderr, "tairseach-mcp: %s\n", printableLines(err.Error()))
	if errors.As(err, new(usageError)) {
		return 2
	}
	return 1
}
