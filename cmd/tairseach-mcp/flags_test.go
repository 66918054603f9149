package main

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// valueNames are the names --help may give a flag's value: pflag's type
// names, and the words a usage text marks with backquotes.
var valueNames = map[string]bool{
	"": true, "string": true, "strings": true, "int": true, "duration": true,
	"DIR": true, "PATH": true, "FILE": true, "LIST": true, "GLOBS": true, "HOST:PORT": true,
}

// eachFlag calls f with every flag of every command, hidden ones included.
func eachFlag(t *testing.T, f func(cmd *cobra.Command, fl *pflag.Flag)) {
	t.Helper()
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		cmd.InitDefaultHelpFlag()
		cmd.LocalFlags().VisitAll(func(fl *pflag.Flag) { f(cmd, fl) })
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd(strings.NewReader(""), io.Discard, io.Discard))
}

// TestFlagValueNames: pflag takes the first backquoted word of a usage text
// as the name of the flag's value in --help (--toolsets `tools --summary`
// once read "--toolsets tools --summary"); each name is a type or one of a
// few placeholders, and no other backquote is left in the text shown.
func TestFlagValueNames(t *testing.T) {
	eachFlag(t, func(cmd *cobra.Command, fl *pflag.Flag) {
		name, usage := pflag.UnquoteUsage(fl)
		if !valueNames[name] {
			t.Errorf("%s --%s: --help names its value %q; mark a placeholder (DIR, FILE…) with backquotes, or none", cmd.CommandPath(), fl.Name, name)
		}
		if strings.Contains(usage, "`") {
			t.Errorf("%s --%s: --help shows a backquote: %s", cmd.CommandPath(), fl.Name, usage)
		}
	})
}
