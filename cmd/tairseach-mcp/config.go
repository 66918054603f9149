package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func newConfigCmd(o *options, stdout io.Writer) *cobra.Command {
	cfg := &cobra.Command{
		Use:   "config",
		Short: "Print configuration snippets for MCP clients",
	}
	cfg.AddCommand(&cobra.Command{
		Use:   "claude",
		Short: "Print the Claude Desktop mcpServers entry for this binary",
		Long: `Print the Claude Desktop mcpServers entry for this binary, with its absolute path and
the flags given on this command line, ready to paste into claude_desktop_config.json.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return printClaudeConfig(cmd, stdout)
		},
	})
	return cfg
}

// claudeEntry is one server of Claude Desktop's mcpServers map.
type claudeEntry struct {
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

func printClaudeConfig(cmd *cobra.Command, stdout io.Writer) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this binary: %w", err)
	}
	if p, err := filepath.EvalSymlinks(exe); err == nil {
		exe = p
	}
	args := []string{}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		v := f.Value.String()
		if f.Name == "manifests" || f.Name == "socket" {
			if abs, err := filepath.Abs(v); err == nil {
				v = abs
			}
		}
		args = append(args, "--"+f.Name+"="+v)
	})
	out, err := json.MarshalIndent(map[string]map[string]claudeEntry{
		"mcpServers": {"tairseach": {Command: exe, Args: args}},
	}, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", out)
	return err
}
