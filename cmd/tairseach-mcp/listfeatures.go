package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/geilt/tairseach-mcp/manifest"
)

func newResourcesCmd(o *options, stdout, stderr io.Writer) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "resources",
		Short: "List the resources and resource templates the server would expose",
		Long: `List the resources the server would expose: the log files of --logs-dir, each manifest
(tairseach://manifests/{id}), tairseach://status, tairseach://permissions where a manifest
maps permissions.list, and the resources and templates manifests declare. The tool
flags (--toolsets, --read-only, --tools, --exclude-tools) hide what they hide.`,
		Example: `  tairseach-mcp resources
  tairseach-mcp resources --json | jq -r '.resources[].uri'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return listFeatures(cmd.Context(), o, o.cliLogger(cmd, stderr), func(ctx context.Context, cs *mcp.ClientSession) error {
				rs, err := cs.ListResources(ctx, nil)
				if err != nil {
					return err
				}
				ts, err := cs.ListResourceTemplates(ctx, nil)
				if err != nil {
					return err
				}
				if asJSON {
					return printJSON(stdout, map[string]any{"resources": rs.Resources, "resourceTemplates": ts.ResourceTemplates})
				}
				w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, "URI\tNAME\tMIME TYPE")
				for _, r := range rs.Resources {
					fmt.Fprintf(w, "%s\t%s\t%s\n", printable(r.URI), printable(r.Name), printable(r.MIMEType))
				}
				for _, t := range ts.ResourceTemplates {
					fmt.Fprintf(w, "%s\t%s\t%s\n", printable(t.URITemplate), printable(t.Name), printable(t.MIMEType))
				}
				return w.Flush()
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the resources and templates as JSON")
	return cmd
}

func newPromptsCmd(o *options, stdout, stderr io.Writer) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "prompts",
		Short: "List the prompts the server would expose",
		Long: `List the prompts the server would expose: one per file NAME.md of --prompts-dir (a
broken file is reported on stderr and left out) and those manifests declare.`,
		Example: `  tairseach-mcp prompts
  tairseach-mcp --prompts-dir ./manifests.example/prompts prompts --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log := o.cliLogger(cmd, stderr)
			if log.GetLevel() == zerolog.Disabled {
				// Broken prompt files are worth seeing here.
				log = o.newLogger(stderr).Level(zerolog.WarnLevel)
			}
			return listFeatures(cmd.Context(), o, log, func(ctx context.Context, cs *mcp.ClientSession) error {
				ps, err := cs.ListPrompts(ctx, nil)
				if err != nil {
					return err
				}
				if asJSON {
					return printJSON(stdout, ps.Prompts)
				}
				w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, "NAME\tARGUMENTS\tDESCRIPTION")
				for _, p := range ps.Prompts {
					args := ""
					for i, a := range p.Arguments {
						if i > 0 {
							args += ","
						}
						args += a.Name
						if a.Required {
							args += "*"
						}
					}
					fmt.Fprintf(w, "%s\t%s\t%s\n", printable(p.Name), printable(args), printable(p.Description))
				}
				return w.Flush()
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the prompts as JSON")
	return cmd
}

// listFeatures opens the server serve would run and lists from it through
// an in-memory session: what a client would see.
func listFeatures(ctx context.Context, o *options, log zerolog.Logger, list func(context.Context, *mcp.ClientSession) error) error {
	reg, err := o.loadManifests(log)
	if errors.Is(err, errNoManifests) {
		reg, err = &manifest.Registry{}, nil
	}
	if err != nil {
		return err
	}
	srv, done, err := o.openServer(ctx, reg, log)
	if err != nil {
		return err
	}
	defer done()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		return err
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "tairseach-mcp", Version: versionString()}, nil).Connect(ctx, ct, nil)
	if err != nil {
		return err
	}
	defer cs.Close()
	return list(ctx, cs)
}
