package mcpserver

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/geilt/tairseach-mcp/manifest"
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
	}{{p.flagName("--tools", "X-MCP-Tools"), p.Tools}, {p.flagName("--exclude-tools", "X-MCP-Exclude-Tools"), p.ExcludeTools}} {
		for _, g := range list.globs {
			if _, err := path.Match(g, ""); err != nil {
				return fmt.Errorf("%s %q: not a valid glob (path.Match syntax: * ? [a-z] \\x)", list.flag, g)
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

// HiddenBy names what keeps a tool from being served.
type HiddenBy int

// What can hide a tool.
const (
	NotHidden    HiddenBy = iota
	ByFlags               // the policy of the flags
	ByHeaders             // a selection made by HTTP request headers
	ByPermission          // a macOS permission that is not granted (Config.HideUngranted)
)

// Reason is why a tool is not served: what hides it, and the words that
// say so. The zero Reason serves it.
type Reason struct {
	By   HiddenBy
	Text string // "hidden by --read-only (…)"
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
			return Reason{by, fmt.Sprintf("hidden by %s (its toolset %q is not among %s)", p.flagName("--toolsets", "X-MCP-Toolsets"), ts, strings.Join(p.Toolsets, ","))}
		}
	}
	if p.ReadOnly {
		a := t.Annotations
		switch {
		case a.ReadOnlyHint == nil || !*a.ReadOnlyHint:
			return Reason{by, fmt.Sprintf("hidden by %s (it is not annotated readOnlyHint)", p.flagName("--read-only", "X-MCP-Readonly"))}
		case a.DestructiveHint != nil && *a.DestructiveHint:
			return Reason{by, fmt.Sprintf("hidden by %s (it is annotated destructiveHint)", p.flagName("--read-only", "X-MCP-Readonly"))}
		}
	}
	if len(p.Tools) > 0 && matchAny(p.Tools, t) == "" {
		return Reason{by, fmt.Sprintf("hidden by %s (neither %s nor %s matches %s)", p.flagName("--tools", "X-MCP-Tools"), t.Name, t.ToolName, strings.Join(p.Tools, ","))}
	}
	if g := matchAny(p.ExcludeTools, t); g != "" {
		return Reason{by, fmt.Sprintf("hidden by %s (it matches %q)", p.flagName("--exclude-tools", "X-MCP-Exclude-Tools"), g)}
	}
	if p.inner != nil {
		return p.inner.Why(t)
	}
	return Reason{}
}

// Message is the answer to a call of tool name, which r hides.
func (r Reason) Message(name string) string {
	switch r.By {
	case ByPermission:
		return fmt.Sprintf("tool %s is %s. Tell the user; once it is granted the tool is offered again within a minute", name, r.Text)
	case ByHeaders:
		return fmt.Sprintf("tool %s is %s; connect without that header to use the tool", name, r.Text)
	}
	return fmt.Sprintf("tool %s is %s; start tairseach-mcp without it to use the tool", name, r.Text)
}

func (p Policy) flagName(flag, header string) string {
	if p.header {
		return "the " + header + " header"
	}
	return flag
}

// matchAny returns the first glob matching t's MCP or manifest name, or "".
func matchAny(globs []string, t manifest.Tool) string {
	for _, g := range globs {
		if ok, _ := path.Match(g, t.Name); ok {
			return g
		}
		if ok, _ := path.Match(g, t.ToolName); ok {
			return g
		}
	}
	return ""
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

// UnknownToolsets returns the names in p.Toolsets that no tool of reg
// belongs to ("all" aside).
func UnknownToolsets(reg *manifest.Registry, names []string) []string {
	known := map[string]bool{}
	for _, t := range reg.Tools {
		known[ToolsetOf(t)] = true
	}
	var out []string
	for _, n := range names {
		if !known[n] {
			out = append(out, n)
		}
	}
	return out
}

// ListBytes is the size of a tools/list result listing tools of these sizes.
func ListBytes(sizes ...int) int {
	n := len(`{"tools":[]}`)
	for i, b := range sizes {
		n += b
		if i > 0 {
			n++
		}
	}
	return n
}
