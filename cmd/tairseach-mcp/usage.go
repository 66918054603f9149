package main

// How the commands answer a command line they cannot take: a mistyped flag
// gets the closest one, a missing argument the usage line.

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagError is the root's FlagErrorFunc, so every command's: pflag's
// "unknown flag: --sokcet" gets the closest flag the command takes
// ("did you mean --socket?"), or where to find them. Cobra suggests
// commands, not flags.
func flagError(cmd *cobra.Command, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		// `invalid argument "maybe" for "--read-only" flag: want true or
		// false`, not the parser's words.
		if msg, _, bad := strings.Cut(err.Error(), ": strconv.ParseBool: "); bad {
			return usageError{errors.New(msg + ": want true or false")}
		}
		return usageError{err}
	}
	best, bestDist := "", 0
	visit := func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		d := editDistance(name, f.Name)
		if d <= max(2, len(name)/3) && (best == "" || d < bestDist) {
			best, bestDist = f.Name, d
		}
	}
	cmd.Flags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	if best != "" {
		return usageError{fmt.Errorf("%w (did you mean --%s?)", err, best)}
	}
	return usageError{fmt.Errorf("%w (%s --help lists the flags)", err, cmd.CommandPath())}
}

// callArgs are call's positional arguments: a tool, then its arguments.
func callArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return usageError{errors.New("usage: tairseach-mcp call NAME [JSON | key=value...]; name the tool to call (tairseach-mcp tools lists them)")}
	}
	return nil
}

// shorten cuts a one-line message to about most characters at a space,
// never inside a word.
func shorten(s string, most int) string {
	r := []rune(s)
	if len(r) <= most {
		return s
	}
	cut := string(r[:most])
	if i := strings.LastIndexByte(cut, ' '); i > most/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:") + " …"
}
