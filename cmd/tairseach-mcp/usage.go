package main

// How the commands answer a command line they cannot take: a mistyped flag
// gets the closest one, a missing argument the usage line.

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/geilt/tairseach-mcp/internal/quote"
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
			return usageError{errors.New(printable(msg) + ": want true or false")}
		}
		return usageError{errors.New(printable(err.Error()))}
	}
	// The name is shown as a client's file or the user wrote it.
	err = errors.New("unknown flag: " + quote.Word("--"+name, quote.Name))
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

// usageArgs makes what the positional-argument checks of c and its
// subcommands refuse (cobra.NoArgs's "unknown command", say) a usageError,
// as the flags' are (flagError).
func usageArgs(c *cobra.Command) {
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			err := check(cmd, args)
			if err != nil && !errors.As(err, new(usageError)) {
				return usageError{err}
			}
			return err
		}
	}
	for _, sub := range c.Commands() {
		usageArgs(sub)
	}
}

// unknownCommand refuses arguments to a command that takes none but has
// subcommands, suggesting the
// commands closest to a mistyped one.
func unknownCommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	hint := cmd.CommandPath() + " --help lists the commands"
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		hint = "did you mean " + strings.Join(s, " or ") + "? (" + hint + ")"
	}
	return usageError{fmt.Errorf("unknown command %s; %s", quote.IdentLine(args[0], quote.Name), hint)}
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
