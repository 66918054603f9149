package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/pflag"

	"github.com/geilt/tairseach-mcp/internal/quote"
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
	confirm      []string
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
	f.StringSliceVar(&p.confirm, "confirm", []string{"none"}, "ask the user (MCP elicitation) before calling: none, destructive (tools annotated destructiveHint), or globs of tool names (MCP or dotted, e.g. 'mail.send,contacts.*'); repeatable")
	f.StringVar(&p.toolMode, "tool-mode", mcpserver.ToolModeAll, "all: list every tool served; discover: list three tools that search, describe and call them (for clients that cap tools or ignore list_changed)")
}

// resolve checks the flags and builds the policy.
func (p *policyOptions) resolve() error {
	toolsets, err := policy.ParseToolsets("--toolsets", p.toolsets)
	if err != nil {
		return usageError{err}
	}
	confirm, err := policy.ParseConfirm(p.confirm)
	if err != nil {
		return usageError{err}
	}
	p.policy = policy.Policy{
		Toolsets:     toolsets,
		ReadOnly:     p.readOnly,
		Tools:        policy.SplitList(p.tools),
		ExcludeTools: policy.SplitList(p.excludeTools),
		Confirm:      confirm,
	}
	if p.toolsets != "" && len(policy.SplitList(p.toolsets)) == 0 {
		return usageError{fmt.Errorf("--toolsets %s: name at least one toolset, or all", quote.Line(p.toolsets, quote.Text))}
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
		return usageError{fmt.Errorf("--tool-mode %s: want all or discover", quote.Line(p.toolMode, quote.Text))}
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
