// Package policy decides which of a registry's tools a server serves: the
// flags' choice (toolsets, read-only, globs), a selection made by HTTP
// request headers on top of it, and the macOS permissions a tool needs.
// What it hides comes with a typed Reason; the words a client reads are
// rendered from it here alone. It knows manifests and nothing of MCP.
package policy

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/geilt/tairseach-mcp/internal/quote"
	"github.com/geilt/tairseach-mcp/manifest"
)

// The request headers that narrow the tools of an HTTP request or session.
const (
	HeaderToolsets     = "X-MCP-Toolsets"
	HeaderReadonly     = "X-MCP-Readonly"
	HeaderTools        = "X-MCP-Tools"
	HeaderExcludeTools = "X-MCP-Exclude-Tools"
)

// Policy chooses which of a registry's tools a server serves. Its zero
// value serves every tool. A tool it hides is neither listed nor callable:
// a call of it fails with the reason, naming the flag or header that hides
// it, and never reaches a socket.
type Policy struct {
	// Toolsets are the manifest ids whose tools are served; empty: all.
	Toolsets []string
	// ReadOnly serves only the tools annotated readOnlyHint: true and not
	// destructiveHint: true.
	ReadOnly bool
	// Tools are globs (path.Match syntax) of which a tool's MCP name or
	// manifest name must match one; empty: all.
	Tools []string
	// ExcludeTools are globs of tools not served, matched the same way.
	ExcludeTools []string
	// Confirm are the rules of the tools whose calls the user confirms
	// first (ParseConfirm): "destructive", or globs matched against a
	// tool's MCP name, manifest name and dotted method. A selection made
	// by headers keeps them (Narrow): headers can hide tools, never
	// confirm less.
	Confirm []string

	// header marks a selection made by HTTP request headers; inner is one
	// applied on top of this one (see Narrow).
	header bool
	inner  *Policy
}

// ToolsetOf is the toolset of a tool: its manifest's id, or the manifest
// file's name without its extension when the manifest has none. Manifests
// with the same id form one toolset.
func ToolsetOf(t manifest.Tool) string {
	if t.ManifestID != "" {
		return t.ManifestID
	}
	base := path.Base(t.File)
	return strings.TrimSuffix(base, path.Ext(base))
}

// SplitList splits a comma-separated list, dropping blanks and duplicates.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// Validate reports a glob that is not valid path.Match syntax.
func (p Policy) Validate() error {
	for _, list := range []struct {
		flag  string
		globs []string
	}{{p.flagName("--tools", HeaderTools), p.Tools}, {p.flagName("--exclude-tools", HeaderExcludeTools), p.ExcludeTools}} {
		for _, g := range list.globs {
			if _, err := path.Match(g, ""); err != nil {
				return fmt.Errorf("%s %s: not a valid glob (path.Match syntax: * ? [a-z] \\x)", list.flag, quote.Line(g, quote.Text))
			}
		}
	}
	if p.inner != nil {
		return p.inner.Validate()
	}
	return nil
}

// IsAll reports whether p serves every tool.
func (p Policy) IsAll() bool {
	return len(p.Toolsets) == 0 && !p.ReadOnly && len(p.Tools) == 0 && len(p.ExcludeTools) == 0 &&
		(p.inner == nil || p.inner.IsAll())
}

// Narrow returns p with h, a selection from HTTP request headers, applied
// on top: it can only hide more tools, never show one p hides.
func (p Policy) Narrow(h Policy) Policy {
	h.header = true
	h.inner = nil
	if p.inner != nil {
		h = p.inner.Narrow(h)
		h.header = true
	}
	if h.IsAll() {
		return p
	}
	p.inner = &h
	return p
}

// Key is a canonical text of p: equal selections have equal keys.
func (p Policy) Key() string {
	var b strings.Builder
	for q := &p; q != nil; q = q.inner {
		ts, inc, exc := slices.Clone(q.Toolsets), slices.Clone(q.Tools), slices.Clone(q.ExcludeTools)
		slices.Sort(ts)
		slices.Sort(inc)
		slices.Sort(exc)
		fmt.Fprintf(&b, "toolsets=%q readonly=%t tools=%q exclude=%q;", ts, q.ReadOnly, inc, exc)
	}
	return b.String()
}

// Hides returns why p hides t ("hidden by --read-only (…)"), or "" when p
// serves it.
func (p Policy) Hides(t manifest.Tool) string { return p.Why(t).Text }

// Why is why p hides t; the zero Reason when p serves it.
func (p Policy) Why(t manifest.Tool) Reason {
	by := ByFlags
	if p.header {
		by = ByHeaders
	}
	if len(p.Toolsets) > 0 {
		if ts := ToolsetOf(t); !slices.Contains(p.Toolsets, ts) {
			return Reason{by, fmt.Sprintf("hidden by %s (its toolset %s is not among %s)", p.flagName("--toolsets", HeaderToolsets), quote.IdentLine(ts, quote.Name), strings.Join(p.Toolsets, ","))}
		}
	}
	if p.ReadOnly && !ReadOnly(t) {
		why := "it is annotated destructiveHint"
		if a := t.Annotations; a.ReadOnlyHint == nil || !*a.ReadOnlyHint {
			why = "it is not annotated readOnlyHint"
		}
		return Reason{by, fmt.Sprintf("hidden by %s (%s)", p.flagName("--read-only", HeaderReadonly), why)}
	}
	if len(p.Tools) > 0 && matchAny(p.Tools, t) == "" {
		return Reason{by, fmt.Sprintf("hidden by %s (neither %s nor %s matches %s)", p.flagName("--tools", HeaderTools), t.Name, t.ToolName, strings.Join(p.Tools, ","))}
	}
	if g := matchAny(p.ExcludeTools, t); g != "" {
		return Reason{by, fmt.Sprintf("hidden by %s (it matches %s)", p.flagName("--exclude-tools", HeaderExcludeTools), quote.Line(g, quote.Text))}
	}
	if p.inner != nil {
		return p.inner.Why(t)
	}
	return Reason{}
}

func (p Policy) flagName(flag, header string) string {
	if p.header {
		return "the " + header + " header"
	}
	return flag
}

// matchAny returns the first glob matching t's MCP or manifest name, or "".
func matchAny(globs []string, t manifest.Tool) string {
	return matchGlob(globs, t.Name, t.ToolName)
}

// matchGlob returns the first of globs (path.Match syntax) that matches
// one of names, or "": the one way a tool is matched against globs.
func matchGlob(globs []string, names ...string) string {
	for _, g := range globs {
		for _, name := range names {
			if ok, _ := path.Match(g, name); ok && name != "" {
				return g
			}
		}
	}
	return ""
}

// NeedsConfirm reports whether calls of t need the user's confirmation
// under p's Confirm rules.
func (p Policy) NeedsConfirm(t manifest.Tool) bool {
	for _, r := range p.Confirm {
		if r == "destructive" {
			if t.Annotations.DestructiveHint != nil && *t.Annotations.DestructiveHint {
				return true
			}
			continue
		}
		if matchGlob([]string{r}, t.Name, t.ToolName, t.Method) != "" {
			return true
		}
	}
	return false
}

// ParseConfirm checks the values of --confirm: "none", "destructive" (the
// tools annotated destructiveHint: true), or globs matched against a tool's
// MCP name and its manifest (dotted) name, such as "contacts.*" or
// "tairseach_mail_send". Values may be comma lists. It returns the rules
// for Policy.Confirm: empty when nothing is confirmed.
func ParseConfirm(values []string) ([]string, error) {
	var rules []string
	none := false
	for _, v := range values {
		for _, r := range strings.Split(v, ",") {
			r = strings.TrimSpace(r)
			switch r {
			case "":
				continue
			case "none":
				none = true
				continue
			case "destructive":
			default:
				if _, err := path.Match(r, ""); err != nil {
					return nil, fmt.Errorf("--confirm %s: not a valid glob: %v", quote.Line(r, quote.Text), err)
				}
			}
			rules = append(rules, r)
		}
	}
	if none && len(rules) > 0 {
		return nil, fmt.Errorf("--confirm none cannot be combined with %s", quote.Line(strings.Join(rules, ","), quote.Text))
	}
	return rules, nil
}

// Toolsets returns the toolsets of reg's tools with how many tools each has,
// sorted by name.
func Toolsets(reg *manifest.Registry) []ToolsetCount {
	counts := map[string]int{}
	for _, t := range reg.Tools {
		counts[ToolsetOf(t)]++
	}
	out := make([]ToolsetCount, 0, len(counts))
	for name, n := range counts {
		out = append(out, ToolsetCount{name, n})
	}
	slices.SortFunc(out, func(a, b ToolsetCount) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// ToolsetCount is a toolset and its number of tools.
type ToolsetCount struct {
	Name  string
	Tools int
}

// UnknownToolsets returns the names that no tool of reg belongs to, and
// the toolsets reg has, sorted: the one check of the --toolsets flag and
// the X-MCP-Toolsets header.
func UnknownToolsets(reg *manifest.Registry, names []string) (unknown, known []string) {
	has := map[string]bool{}
	for _, t := range reg.Tools {
		has[ToolsetOf(t)] = true
	}
	for _, n := range names {
		if !has[n] {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) == 0 {
		return nil, nil
	}
	return unknown, slices.Sorted(maps.Keys(has))
}

// ReadOnly reports whether t only reads: annotated readOnlyHint and not
// destructiveHint. --read-only serves these alone, and a completion calls
// no other.
func ReadOnly(t manifest.Tool) bool {
	a := t.Annotations
	return a.ReadOnlyHint != nil && *a.ReadOnlyHint && (a.DestructiveHint == nil || !*a.DestructiveHint)
}

// ParseToolsets is the toolsets a list names (the --toolsets flag's or the
// X-MCP-Toolsets header's, named by from): "all" alone is every toolset
// (nil), and is no toolset beside others.
func ParseToolsets(from, list string) ([]string, error) {
	names := SplitList(list)
	if !slices.Contains(names, "all") {
		return names, nil
	}
	if len(names) > 1 {
		return nil, fmt.Errorf("%s %s: \"all\" cannot be combined with other toolsets", from, quote.Line(list, quote.Text))
	}
	return nil, nil
}
