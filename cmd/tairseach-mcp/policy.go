package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/pflag"

	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver"
	"github.com/geilt/tairseach-mcp/mcpserver/policy"
)

// policyOptions are the flags that choose the tools served.
type policyOptions struct {
	toolsets     string // comma-separated manifest ids, or "all"
	readOnly     bool
	tools        string // comma-separated globs
	excludeTools string
	toolMode     string // all or discover
	// hideUngranted leaves out the tools whose macOS permission the app
	// does not hold.
	hideUngranted bool
	// permissionsInterval is the longest time between two reads of the
	// grants (hidden: the tests shorten it).
	permissionsInterval time.Duration

	policy policy.Policy // filled in by resolve
}

func (p *policyOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&p.toolsets, "toolsets", "all", "serve only the tools of these toolsets: a `LIST` of manifest ids, comma-separated (tools --summary lists them), or all")
	f.BoolVar(&p.readOnly, "read-only", false, "serve only the tools annotated readOnlyHint and not destructiveHint")
	f.StringVar(&p.tools, "tools", "", "serve only the tools whose MCP or manifest name matches one of these `GLOBS` (comma-separated, e.g. 'contacts.*,tairseach_calendar_list')")
	f.StringVar(&p.excludeTools, "exclude-tools", "", "do not serve the tools whose MCP or manifest name matches one of these `GLOBS` (comma-separated)")
	f.BoolVar(&p.hideUngranted, "hide-ungranted", true, "leave out the tools whose macOS permission Tairseach has not been granted (read from permissions.list every minute); false offers every tool")
	f.DurationVar(&p.permissionsInterval, "permissions-interval", time.Minute, "how often the macOS permissions are read again (besides at start, after a reload and after a call refused for one)")
	_ = f.MarkHidden("permissions-interval")
	f.StringVar(&p.toolMode, "tool-mode", mcpserver.ToolModeAll, "all: list every tool served; discover: list three tools that search, describe and call them (for clients that cap tools or ignore list_changed)")
}

// resolve checks the flags and builds the policy.
func (p *policyOptions) resolve() error {
	toolsets, err := policy.ParseToolsets("--toolsets", p.toolsets)
	if err != nil {
		return usageError{err}
	}
	p.policy = policy.Policy{
		Toolsets:     toolsets,
		ReadOnly:     p.readOnly,
		Tools:        policy.SplitList(p.tools),
		ExcludeTools: policy.SplitList(p.excludeTools),
	}
	if p.toolsets != "" && len(policy.SplitList(p.toolsets)) == 0 {
		return usageError{fmt.Errorf("--toolsets %q: name at least one toolset, or all", p.toolsets)}
	}
	if err := p.policy.Validate(); err != nil {
		return usageError{err}
	}
	if p.permissionsInterval <= 0 {
		return usageError{fmt.Errorf("--permissions-interval %s: want a positive duration", p.permissionsInterval)}
	}
	switch p.toolMode {
	case mcpserver.ToolModeAll, mcpserver.ToolModeDiscover:
	default:
		return usageError{fmt.Errorf("--tool-mode %q: want all or discover", p.toolMode)}
	}
	return nil
}

// checkToolsets reports the --toolsets names that no manifest of reg has,
// listing those it has.
func (p *policyOptions) checkToolsets(reg *manifest.Registry) error {
	unknown, known := policy.UnknownToolsets(reg, p.policy.Toolsets)
	if len(unknown) == 0 {
		return nil
	}
	return usageError{fmt.Errorf("--toolsets: unknown toolset %s; the manifests have: %s (or all)",
		strings.Join(unknown, ","), strings.Join(known, ","))}
}

// warnEmptyToolsets logs the selected toolsets a reload left without tools:
// they serve nothing until their manifests come back.
func (p *policyOptions) warnEmptyToolsets(log zerolog.Logger, reg *manifest.Registry) {
	if unknown, _ := policy.UnknownToolsets(reg, p.policy.Toolsets); len(unknown) > 0 {
		log.Warn().Strs("toolsets", unknown).Msg("selected toolsets have no tools now; they are served empty until their manifests return")
	}
}

// hiddenCount is the number of reg's tools the policy hides.
func hiddenCount(srv *mcpserver.Server, reg *manifest.Registry) int {
	n := 0
	for _, t := range reg.Tools {
		if _, ok := srv.Hidden(t.Name); ok {
			n++
		}
	}
	return n
}

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
