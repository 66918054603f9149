package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
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
		cmd.InitDefaultVersionFlag()
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

// appDirsEnv are the flags that say where Tairseach's files are, whose
// environment variables have short names; every other server flag's is
// TAIRSEACH_MCP_<FLAG>.
var appDirsEnv = map[string]string{
	"manifests": "TAIRSEACH_MANIFESTS", "socket": "TAIRSEACH_SOCKET",
	"logs-dir": "TAIRSEACH_LOGS", "prompts-dir": "TAIRSEACH_PROMPTS",
}

// TestEnvNames: the environment variable of every server flag follows the
// one rule docs/flags.md states.
func TestEnvNames(t *testing.T) {
	eachFlag(t, func(cmd *cobra.Command, fl *pflag.Flag) {
		if cmd != cmd.Root() || cmd.PersistentFlags().Lookup(fl.Name) == nil {
			return
		}
		want, ok := appDirsEnv[fl.Name]
		if !ok {
			want = "TAIRSEACH_MCP_" + strings.ToUpper(strings.ReplaceAll(fl.Name, "-", "_"))
		}
		if got := envName(fl.Name); got != want {
			t.Errorf("--%s: environment variable %s, want %s", fl.Name, got, want)
		}
	})
}

// docFlag is one flag docs/flags.md documents.
type docFlag struct {
	value string // the placeholder after the name: DIR, FILE; "" for none
	env   string // the environment variable, for server flags
}

// flagsDoc reads the tables of docs/flags.md: the server flags, and each
// command's, by command path ("tairseach-mcp" for the server's).
func flagsDoc(t *testing.T) map[string]map[string]docFlag {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", "flags.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := map[string]map[string]docFlag{}
	add := func(cmd, cell, env string) {
		if doc[cmd] == nil {
			doc[cmd] = map[string]docFlag{}
		}
		for _, f := range strings.Split(cell, ", ") {
			name, value, _ := strings.Cut(strings.Trim(f, "`"), " ")
			if name, ok := strings.CutPrefix(name, "--"); ok {
				if _, dup := doc[cmd][name]; dup {
					t.Errorf("docs/flags.md: %s --%s twice", cmd, name)
				}
				doc[cmd][name] = docFlag{value: value, env: strings.Trim(env, "`")}
			}
		}
	}
	section := ""
	for _, l := range strings.Split(string(b), "\n") {
		if h, ok := strings.CutPrefix(l, "## "); ok {
			section = h
			continue
		}
		cells := strings.Split(strings.Trim(l, "|"), " | ")
		if !strings.HasPrefix(l, "| `") || len(cells) < 3 {
			continue
		}
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		switch section {
		case "Server flags":
			add("tairseach-mcp", cells[0], cells[1])
		case "Command flags":
			add("tairseach-mcp "+strings.Trim(cells[0], "`"), cells[1], "")
		}
	}
	return doc
}

// TestFlagsDoc: docs/flags.md documents every flag of every command (but
// --help and the hidden ones), with the environment variable of each server
// flag and the placeholder --help gives its value, and no flag that does
// not exist.
func TestFlagsDoc(t *testing.T) {
	doc := flagsDoc(t)
	if len(doc["tairseach-mcp"]) < 30 {
		t.Fatalf("docs/flags.md: only %d server flags read; is the table still under \"## Server flags\"?", len(doc["tairseach-mcp"]))
	}
	seen := map[string]bool{}
	eachFlag(t, func(cmd *cobra.Command, fl *pflag.Flag) {
		if fl.Name == "help" {
			return
		}
		path := cmd.CommandPath()
		d, documented := doc[path][fl.Name]
		seen[path+" --"+fl.Name] = true
		switch {
		case fl.Hidden && documented:
			t.Errorf("docs/flags.md documents %s --%s, which is hidden", path, fl.Name)
		case fl.Hidden:
		case !documented:
			t.Errorf("docs/flags.md does not document %s --%s (%s)", path, fl.Name, fl.Usage)
		default:
			if name, _ := pflag.UnquoteUsage(fl); strings.ToUpper(name) == name && name != d.value {
				t.Errorf("docs/flags.md: %s --%s %s, but --help says --%s %s", path, fl.Name, d.value, fl.Name, name)
			}
			if cmd == cmd.Root() && cmd.PersistentFlags().Lookup(fl.Name) != nil && d.env != envName(fl.Name) {
				t.Errorf("docs/flags.md: --%s's environment variable is %s, not %q", fl.Name, envName(fl.Name), d.env)
			}
		}
	})
	for path, flags := range doc {
		for name := range flags {
			if !seen[path+" --"+name] {
				t.Errorf("docs/flags.md documents %s --%s, which does not exist", path, name)
			}
		}
	}
}

// TestUnreadableSettings: a server setting whose value cannot be read, on
// the command line or in its environment variable, is an error that quotes
// it (exit 2), never taken as off: a boolean that is not true or false
// (--read-only=maybe), and a ${…} placeholder its host left as it was (an
// MCP Bundle's "${user_config.read_only}" with no value), in any flag,
// where it would otherwise be read as a glob that matches nothing
// (--exclude-tools, --confirm) or as a path.
func TestUnreadableSettings(t *testing.T) {
	cleanEnv(t)
	t.Setenv("TAIRSEACH_MANIFESTS", t.TempDir())
	root := newRootCmd(strings.NewReader(""), io.Discard, io.Discard)
	var names []string
	bools := map[string]bool{}
	root.PersistentFlags().VisitAll(func(fl *pflag.Flag) {
		names = append(names, fl.Name)
		bools[fl.Name] = fl.Value.Type() == "bool"
	})
	for _, name := range names {
		values := []string{"${user_config." + strings.ReplaceAll(name, "-", "_") + "}", "x${HOME}"}
		if bools[name] {
			values = append(values, "maybe", "yes", "")
		}
		for _, v := range values {
			if v == "" && !bools[name] {
				continue
			}
			t.Run(name+"="+v, func(t *testing.T) {
				// validate: it reads the settings, then only the manifests.
				_, stderr, code := cli("", "--"+name+"="+v, "validate")
				if code != 2 || !strings.Contains(stderr, fmt.Sprintf("%q", v)) {
					t.Errorf("--%s=%s: exit %d, want 2 and the value quoted; stderr:\n%s", name, v, code, stderr)
				}
				if v == "" {
					return // an empty variable is one not set
				}
				t.Setenv(envName(name), v)
				_, stderr, code = cli("", "validate")
				if code != 2 || !strings.Contains(stderr, envName(name)+"="+fmt.Sprintf("%q", v)) {
					t.Errorf("%s=%s: exit %d, want 2 and the value quoted; stderr:\n%s", envName(name), v, code, stderr)
				}
			})
		}
	}
	// A variable of a switch that narrows what is served, set but empty (a
	// ${VAR} a host left empty), is an error, not that switch off.
	for _, name := range []string{"read-only", "toolsets", "tools", "exclude-tools", "confirm"} {
		t.Run(envName(name)+"=", func(t *testing.T) {
			t.Setenv(envName(name), "")
			_, stderr, code := cli("", "validate")
			if code != 2 || !strings.Contains(stderr, envName(name)+" is set but empty") {
				t.Errorf("exit %d, want 2 and the variable named; stderr:\n%s", code, stderr)
			}
		})
	}
}
