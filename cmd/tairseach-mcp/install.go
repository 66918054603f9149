package main

// install and uninstall: their flags, and the flags of the server the
// entry starts, handed to internal/install, which edits the client's file;
// config claude is install claude-desktop --print by its older name.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/geilt/tairseach-mcp/cmd/tairseach-mcp/internal/install"
	"github.com/geilt/tairseach-mcp/internal/clientconfig"
	"github.com/geilt/tairseach-mcp/mcpserver/streamable"
)

// installFlags say which file install and uninstall edit, and whether to
// write it.
type installFlags struct {
	config string // --config: the client's configuration file
	print  bool   // --print: show the resulting file, write nothing
}

func newInstallCmd(o *options, stdout, stderr io.Writer) *cobra.Command {
	var f installFlags
	cmd := &cobra.Command{
		Use:   "install CLIENT",
		Short: "Add tairseach to an MCP client's configuration (" + strings.Join(clientNames(), ", ") + ")",
		Long: `Add a "tairseach" server to the configuration file of an MCP client, so that the client
starts this binary (by its absolute path) with the flags given here, and those set through
TAIRSEACH_* environment variables, which the client would not see.

Only the members install owns are written: command and args, or the URL and the
Authorization header, and the type. What you added to the entry (env, disabled, timeouts,
trust…), other servers and settings, comments, trailing commas and the layout of the file
stay as they were, and uninstall after a first install gives the file back as it was.
Before each change to a file, install copies it to FILE` + clientconfig.BackupSuffix + `, then to
FILE` + clientconfig.BackupSuffix + `.2, .3…, 0600, and keeps the last 3: each holds your tokens. Running
the command again when the entry is already there changes nothing and makes no backup. A file
that is a symlink (dotfiles) stays one: the file it points to is written, and made if missing.
--print shows the file as it would be written and writes nothing at all.

With --transport http, the clients that reach servers by URL get an HTTP entry with the bearer
token (OpenClaw's names ${TAIRSEACH_MCP_TOKEN} instead); start the server yourself. They are
` + strings.Join(urlClientNames(), ", ") + `.

Clients and their files (macOS; ~/.config on Linux):
` + clientFiles(),
		Example: `  tairseach-mcp install claude-desktop
  tairseach-mcp --socket /tmp/tairseach.sock install cursor
  tairseach-mcp install vscode --print
  tairseach-mcp --transport http install codex`,
		Args:              exactClient,
		ValidArgsFunction: completeClient,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runInstall(cmd, o, args[0], f, stdout, stderr)
		},
	}
	cmd.Flags().StringVar(&f.config, "config", "", "the client's configuration file (default: its usual place)")
	cmd.Flags().BoolVar(&f.print, "print", false, "print the file as it would be written, and write nothing")
	return cmd
}

func newUninstallCmd(stdout, stderr io.Writer) *cobra.Command {
	var f installFlags
	cmd := &cobra.Command{
		Use:   "uninstall CLIENT",
		Short: "Remove tairseach from an MCP client's configuration",
		Long: `Remove the "tairseach" server from an MCP client's configuration file. Nothing else in the
file changes: after install and uninstall it is as it was, byte for byte. Before the change, the
command copies the file to its next backup, as install does (FILE` + clientconfig.BackupSuffix + `, .2…).`,
		Args:              exactClient,
		ValidArgsFunction: completeClient,
		RunE: func(_ *cobra.Command, args []string) error {
			return runUninstall(args[0], f, stdout, stderr)
		},
	}
	cmd.Flags().StringVar(&f.config, "config", "", "the client's configuration file (default: its usual place)")
	cmd.Flags().BoolVar(&f.print, "print", false, "print the file as it would be written, and write nothing")
	return cmd
}

// newConfigCmd is config claude: install claude-desktop --print, by its
// older name.
func newConfigCmd(o *options, stdout, stderr io.Writer) *cobra.Command {
	cfg := &cobra.Command{
		Use:   "config",
		Short: "Print configuration snippets for MCP clients",
		Args:  unknownCommand,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cfg.AddCommand(&cobra.Command{
		Use:   "claude",
		Short: "Print Claude Desktop's configuration with the tairseach entry (install claude-desktop --print)",
		Long: `Print Claude Desktop's claude_desktop_config.json as tairseach-mcp install claude-desktop
would write it: the file's other servers and settings, and a tairseach entry with the absolute
path of this binary and the flags (and TAIRSEACH_* variables) given here.
tairseach-mcp install claude-desktop writes it for you.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runInstall(cmd, o, "claude-desktop", installFlags{print: true}, stdout, stderr)
		},
	})
	return cfg
}

func clientNames() []string { return install.Names() }

// urlClientNames are the clients that reach servers by URL.
func urlClientNames() []string {
	var names []string
	for _, c := range install.Clients {
		if c.HTTP {
			names = append(names, c.Name)
		}
	}
	return names
}

// clientFiles lists each client's file, a line each, for install's help.
func clientFiles() string {
	width := 0
	for _, c := range install.Clients {
		width = max(width, len(c.Name))
	}
	var b strings.Builder
	for i, c := range install.Clients {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "  %-*s  %s", width, c.Name, c.File)
	}
	return b.String()
}

func completeClient(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return clientNames(), cobra.ShellCompDirectiveNoFileComp
}

func exactClient(_ *cobra.Command, args []string) error {
	if len(args) != 1 {
		return usageError{fmt.Errorf("name one client: %s", strings.Join(clientNames(), ", "))}
	}
	return nil
}

func runInstall(cmd *cobra.Command, o *options, name string, f installFlags, stdout, stderr io.Writer) error {
	c, err := install.Find(name)
	if err != nil {
		return installError(err)
	}
	args, left, notes := entryArgs(cmd)
	cfg := install.Config{
		File: f.config, Print: f.print,
		Args: args, Left: left, Notes: notes,
		HTTP: o.transport == "http", Listen: o.http.listen, NoAuth: o.http.noAuth,
		Token:  func() (string, string, error) { return entryToken(o, f.print) },
		Setup:  []string{o.manifests, o.socket},
		Stdout: stdout, Stderr: stderr,
	}
	if o.http.authTokenFile != "" {
		cfg.AuthTokenFile = absPath(o.http.authTokenFile)
	}
	return installError(install.Install(c, cfg))
}

func runUninstall(name string, f installFlags, stdout, stderr io.Writer) error {
	c, err := install.Find(name)
	if err != nil {
		return installError(err)
	}
	return installError(install.Uninstall(c, install.Config{File: f.config, Print: f.print, Stdout: stdout, Stderr: stderr}))
}

// installError marks install's usage errors as this command line's.
func installError(err error) error {
	if errors.Is(err, install.ErrUsage) {
		return usageError{err}
	}
	return err
}

// entryToken is the token an HTTP entry carries and the file it is in (""
// for TAIRSEACH_MCP_TOKEN; both "" with --no-auth). Without print the
// default file is made when missing; with print a missing default file
// gives its path and no token.
func entryToken(o *options, print bool) (path, token string, err error) {
	if !print {
		return clientToken(o)
	}
	if o.http.noAuth {
		return "", "", nil
	}
	path, token, _, _, err = o.http.loadToken(false)
	if err != nil && errors.Is(err, fs.ErrNotExist) && o.http.authTokenFile == "" && os.Getenv(tokenEnv) == "" {
		return streamable.DefaultTokenPath(), "", nil
	}
	return path, token, err
}

// entryArgs are the flags of the command line and the environment that
// change what is served, as --name=value. left names those a stdio entry
// cannot carry; notes say which came from the environment.
func entryArgs(cmd *cobra.Command) (args, left, notes []string) {
	args = []string{}
	flags := cmd.Flags()
	cmd.Root().PersistentFlags().VisitAll(func(g *pflag.Flag) {
		f := flags.Lookup(g.Name)
		if f == nil || f.Hidden {
			return
		}
		env := envName(f.Name)
		fromEnv := !f.Changed && os.Getenv(env) != ""
		if !f.Changed && !fromEnv {
			return
		}
		switch {
		case f.Name == "transport" && f.Value.String() == "stdio":
			return
		case f.Name == "transport", f.Name == "linger", strings.HasPrefix(f.Usage, "with --transport http"):
			shown := "--" + f.Name
			if fromEnv {
				shown = env
			}
			left = append(left, shown)
			return
		}
		v := f.Value.String()
		if f.Name == "manifests" || f.Name == "socket" {
			v = absPath(v) // the client starts servers in a directory of its own
		}
		args = append(args, "--"+f.Name+"="+v)
		if fromEnv {
			notes = append(notes, fmt.Sprintf("%s carried into the entry as --%s=%s", env, f.Name, v))
		}
	})
	return args, left, notes
}

func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// clientToken returns what an HTTP client of this server needs: the token
// and the file it is in (path is "" when the token comes from
// TAIRSEACH_MCP_TOKEN; both are "" with --no-auth). It creates the default
// token file when missing, as the server's first start would, so that a
// client can be configured before the server ever ran.
func clientToken(o *options) (path, token string, err error) {
	if o.http.noAuth {
		return "", "", nil
	}
	path, token, _, _, err = o.http.loadToken(true)
	return path, token, err
}
