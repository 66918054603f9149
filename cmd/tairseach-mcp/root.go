package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"
)

// run executes the command line and returns the process exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o := &options{}
	cmd := newRootCmdWith(o, stdin, stdout, stderr)
	// Cobra's own commands too, which it would add as it executes.
	cmd.InitDefaultHelpCmd()
	cmd.InitDefaultCompletionCmd()
	usageArgs(cmd)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	if o.end != nil {
		o.end.Close()
	}
	return exitStatus(err, stderr)
}

func newRootCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	return newRootCmdWith(&options{}, stdin, stdout, stderr)
}

// newRootCmdWith builds the command tree with its flags bound to o; run
// closes o.end, the owner of the process's end, once it has run.
func newRootCmdWith(o *options, stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "tairseach-mcp",
		Short: "MCP server for the Tairseach capabilities on this machine",
		Long: `tairseach-mcp serves the tools described by the Tairseach manifests as an MCP server
and forwards each call to the Tairseach server's Unix socket.

Every flag below can also be set by environment: TAIRSEACH_MANIFESTS, TAIRSEACH_SOCKET,
TAIRSEACH_LOGS and TAIRSEACH_PROMPTS for where Tairseach's files are, and
TAIRSEACH_MCP_<FLAG> for the others (for example TAIRSEACH_MCP_CALL_TIMEOUT=1m).`,
		Version:       versionString(),
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          unknownCommand,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.resolve(cmd); err != nil {
				return err
			}
			o.startEnd(cmd, stderr)
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.transport == "stdio" && stdinIsTerminal(stdin) {
				greetTerminal(stderr)
			}
			return serve(cmd.Context(), o, stdin, stdout)
		},
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SuggestionsMinimumDistance = 2
	root.SetVersionTemplate("tairseach-mcp {{.Version}}\n")
	root.SetFlagErrorFunc(flagError)

	o.addFlags(root.PersistentFlags())

	root.AddCommand(newConfigCmd(o, stdout, stderr))
	root.AddCommand(newInstallCmd(o, stdout, stderr))
	root.AddCommand(newUninstallCmd(stdout, stderr))
	root.AddCommand(newToolsCmd(o, stdout, stderr))
	root.AddCommand(newValidateCmd(o, stdout, stderr))
	root.AddCommand(newCallCmd(o, stdin, stdout, stderr))
	root.AddCommand(newDoctorCmd(o, stdout, stderr))
	root.AddCommand(newResourcesCmd(o, stdout, stderr))
	root.AddCommand(newPromptsCmd(o, stdout, stderr))
	return root
}
