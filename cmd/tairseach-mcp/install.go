package main

// install and uninstall: add one "tairseach" entry to an MCP client's
// configuration file, or set the members of it that install owns, or take
// it out, leaving every other byte of the file as it was (the editing is
// internal/clientconfig's); config claude is install claude-desktop
// --print by its older name. The clients are in install_clients.go, the
// entry in install_entry.go, the reading and writing of their files in
// install_write.go.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/geilt/tairseach-mcp/internal/clientconfig"
)

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
			c, err := findClient(args[0])
			if err != nil {
				return err
			}
			return runInstall(cmd, o, c, f, stdout, stderr)
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
			c, err := findClient(args[0])
			if err != nil {
				return err
			}
			return runUninstall(c, f, stdout, stderr)
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
			c, err := findClient("claude-desktop")
			if err != nil {
				return err
			}
			return runInstall(cmd, o, c, installFlags{print: true}, stdout, stderr)
		},
	})
	return cfg
}

// urlClientNames are the clients that reach servers by URL.
func urlClientNames() []string {
	var names []string
	for _, c := range mcpClients {
		if c.http {
			names = append(names, c.name)
		}
	}
	return names
}

// clientFiles lists each client's file, a line each, for install's help.
func clientFiles() string {
	width := 0
	for _, c := range mcpClients {
		width = max(width, len(c.name))
	}
	var b strings.Builder
	for i, c := range mcpClients {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "  %-*s  %s", width, c.name, c.file)
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

func runInstall(cmd *cobra.Command, o *options, c mcpClient, f installFlags, stdout, stderr io.Writer) error {
	cf, err := f.open(c)
	fe := (*fileSyntaxError)(nil)
	if err != nil && !(c.format.json5 && errors.As(err, &fe)) {
		return err
	}
	entry, notes, err := buildEntry(cmd, o, c, f.print)
	if err != nil {
		return err
	}
	if fe != nil {
		return installJSON5(c, f, fe, entry, notes, stdout, stderr)
	}
	found, err := cf.doc.Has()
	if err != nil {
		return fmt.Errorf("%s: %w", cf.shown, err)
	}
	fields, moved, err := c.moveMisplaced(cf, c.entry(entry))
	if err != nil {
		return fmt.Errorf("%s: %w", cf.shown, err)
	}
	if moved != "" {
		notes = append(notes, moved)
	}
	if err := cf.doc.Set(fields); err != nil {
		return fmt.Errorf("%s: %w", cf.shown, err)
	}
	if cf.data != nil && bytes.Equal(cf.doc.Bytes(), cf.data) && !f.print {
		for _, n := range notes {
			fmt.Fprintf(stderr, "tairseach-mcp: %s\n", n)
		}
		fmt.Fprintf(stdout, "%s already has this tairseach entry in %s; nothing changed\n", c.title, cf.shown)
		return nil
	}
	verb := "added"
	if found {
		verb = "updated"
	}
	if entry.token != "" && c.tokenRef == "" && cf.data != nil && cf.mode&0o077 != 0 {
		if f.print {
			notes = append(notes, fmt.Sprintf("%s is readable by others (%04o); install makes it 0600, as it will hold the token", cf.shown, cf.mode))
		} else {
			notes = append(notes, fmt.Sprintf("%s was readable by others (%04o); now 0600, as it holds the token", cf.shown, cf.mode))
		}
		cf.mode = 0o600
	}
	for _, n := range notes {
		fmt.Fprintf(stderr, "tairseach-mcp: %s\n", n)
	}
	if f.print {
		return printConfig(cf, stdout, stderr)
	}
	backup, err := cf.write()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s the tairseach entry in %s%s\n%s\n", verb, cf.shown, backup, c.afterAdd)
	if missing := missingSetup(o); len(missing) > 0 {
		verb := "does not exist yet, so " + c.title + " will see no tools until it does"
		if len(missing) > 1 {
			verb = "do not exist yet, so " + c.title + " will see no tools until they do"
		}
		fmt.Fprintf(stderr, "tairseach-mcp: %s %s; tairseach-mcp doctor checks the setup\n", strings.Join(missing, " and "), verb)
	}
	return nil
}

// missingSetup names what the server needs and does not find: the
// manifests directory, the socket.
func missingSetup(o *options) []string {
	var missing []string
	for _, p := range []string{o.manifests, o.socket} {
		if _, err := os.Stat(p); err != nil {
			missing = append(missing, p)
		}
	}
	return missing
}

func runUninstall(c mcpClient, f installFlags, stdout, stderr io.Writer) error {
	cf, err := f.open(c)
	if fe := (*fileSyntaxError)(nil); c.format.json5 && errors.As(err, &fe) {
		return fmt.Errorf("%s:%d:%d: %s: uninstall edits %s's JSON5 in place only as JSON with comments and trailing commas; run OpenClaw's own command, which rewrites the file as plain JSON:\n  openclaw mcp unset %s",
			fe.path, fe.err.Line, fe.err.Col, fe.err.Cause, c.title, entryName)
	}
	if err != nil {
		return err
	}
	found, err := cf.doc.Has()
	if err != nil {
		return fmt.Errorf("%s: %w", cf.shown, err)
	}
	if !found {
		if cf.data == nil {
			fmt.Fprintf(stdout, "%s does not exist; no tairseach entry to remove\n", cf.shown)
		} else {
			fmt.Fprintf(stdout, "no tairseach entry in %s; nothing changed\n", cf.shown)
		}
		return nil
	}
	if err := cf.doc.Remove(); err != nil {
		return fmt.Errorf("%s: %w", cf.shown, err)
	}
	if f.print {
		return printConfig(cf, stdout, stderr)
	}
	backup, err := cf.write()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "removed the tairseach entry from %s%s\n", cf.shown, backup)
	return nil
}

func printConfig(cf *configFile, stdout, stderr io.Writer) error {
	fmt.Fprintf(stderr, "tairseach-mcp: --print: %s not written; it would read:\n", cf.shown)
	_, err := stdout.Write(cf.doc.Bytes())
	return err
}
