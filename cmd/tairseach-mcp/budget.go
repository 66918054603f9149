package main

// What the served tools cost a client's context: the size of tools/list,
// for tools --budget and --summary and for doctor.

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver"
	"github.com/geilt/tairseach-mcp/mcpserver/policy"
)

// budgetLine describes the tools/list the server sends, as tools --budget
// and doctor print it.
func budgetLine(o *options, srv *mcpserver.Server) (line string, over bool) {
	b := srv.Budget()
	mode := "--tool-mode " + o.toolMode
	if o.toolMode == mcpserver.ToolModeDiscover {
		mode += fmt.Sprintf(", %d tools reached through it", len(srv.Served()))
	}
	return fmt.Sprintf("tools/list (%s): %s", mode, b), len(b.Over) > 0
}

// fewerTools is the advice when tools/list is over a client's cap.
const fewerTools = "those clients show the model only the first tools; serve fewer with --toolsets, --read-only, --tools or --exclude-tools, or use --tool-mode discover (docs/policy.md: Choosing the tools)"

func printBudget(o *options, srv *mcpserver.Server, stdout, stderr io.Writer) error {
	line, over := budgetLine(o, srv)
	if _, err := fmt.Fprintln(stdout, line); err != nil {
		return err
	}
	if over {
		fmt.Fprintln(stderr, "tairseach-mcp: warning: "+fewerTools)
	}
	return nil
}

// printSummary prints one line per toolset: its tools, those the flags
// serve, and what they add to tools/list in --tool-mode all.
func printSummary(o *options, reg *manifest.Registry, srv *mcpserver.Server, stdout io.Writer) error {
	served := map[string][]int{}
	var all []int
	for _, t := range srv.Served() {
		served[t.Toolset] = append(served[t.Toolset], t.Bytes)
		all = append(all, t.Bytes)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOLSET\tTOOLS\tSERVED\tBYTES\t~TOKENS")
	total := 0
	for _, ts := range policy.Toolsets(reg) {
		sizes := served[ts.Name]
		n := mcpserver.ListBytes(sizes...)
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\n", ts.Name, ts.Tools, len(sizes), n, (n+3)/4)
		total += ts.Tools
	}
	n := mcpserver.ListBytes(all...)
	fmt.Fprintf(tw, "(all)\t%d\t%d\t%d\t%d\n", total, len(all), n, (n+3)/4)
	if err := tw.Flush(); err != nil {
		return err
	}
	line, _ := budgetLine(o, srv)
	_, err := fmt.Fprintf(stdout, "\nBYTES: the tools/list result of the toolset's served tools alone (--tool-mode all); ~TOKENS: bytes/4.\n%s\n", line)
	return err
}
