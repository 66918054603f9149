package main

import (
	"io"

	"github.com/spf13/cobra"
)

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
