package pipeline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"

	"github.com/geilt/tairseach-mcp/internal/quote"
	"github.com/geilt/tairseach-mcp/mcpserver/backend"
	"github.com/geilt/tairseach-mcp/mcpserver/check"
	"github.com/geilt/tairseach-mcp/mcpserver/permissions"
	"github.com/geilt/tairseach-mcp/mcpserver/policy"
	"github.com/geilt/tairseach-mcp/mcpserver/routes"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/manifest"
)

// decodeDiscoveryArgs decodes the arguments of a discovery tool into v.
// Members it does not know are ignored, as the tools' schemas allow them
// (clients add some of their own, such as Gemini CLI's wait_for_previous).
func decodeDiscoveryArgs(args json.RawMessage, v any) string {
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	if err := dec.Decode(v); err != nil {
		return check.DecodeProblem(err)
	}
	return ""
}

// resolveTool finds a served tool by its MCP name or manifest name.
func resolveTool(c *Request, table *routes.Table, prefix, name string) (string, *mcp.CallToolResult) {
	if name == "" {
		return "", c.refuse(backend.RuleOther, "missing tool name; "+table.Discover.Search+" lists the tools")
	}
	if _, ok := table.ByName[name]; ok {
		return name, nil
	}
	if _, ok := table.Blocked[name]; ok {
		return name, nil // left out for a permission: the pipeline asks, as for a call by name
	}
	if why, ok := table.Hidden[name]; ok {
		return "", refuseHidden(c, name, why)
	}
	for _, n := range table.Order {
		if r, ok := table.ByName[n]; ok && r.Tool.ToolName == name {
			return n, nil
		}
	}
	for n, why := range table.Hidden {
		if m, _ := manifest.MCPName(prefix, name); m == n {
			if _, ok := table.Blocked[n]; ok {
				return n, nil
			}
			return "", refuseHidden(c, n, why)
		}
	}
	return "", c.refuse(backend.RuleUnknownTool, fmt.Sprintf("unknown tool %s; %s lists the tools", quote.IdentLine(name, quote.Name), table.Discover.Search))
}

// describeTool returns a served tool's definition as tools/list would.
func describeTool(c *Request, table *routes.Table, prefix string) *mcp.CallToolResult {
	var p struct {
		Name string `json:"name"`
	}
	if err := decodeDiscoveryArgs(c.Args, &p); err != "" {
		return c.refuse(backend.RuleInvalidArguments, fmt.Sprintf("invalid arguments for %s: %s; pass {\"name\": \"<tool>\"}", table.Discover.Describe, err))
	}
	name, res := resolveTool(c, table, prefix, p.Name)
	if res != nil {
		return res
	}
	return check.TextResult(table.Tools[name])
}

// maxSearchWords is the most words of a query that count.
const maxSearchWords = 32

// searchHit is one result of the search tool.
type searchHit struct {
	Name        string               `json:"name"`
	Description string               `json:"description"`
	Toolset     string               `json:"toolset"`
	Annotations *mcp.ToolAnnotations `json:"annotations,omitempty"`
	score       int
}

// leftOutHit is a tool that matches a search but is left out because
// macOS has not granted the permission it needs.
type leftOutHit struct {
	Name       string             `json:"name"`
	Permission string             `json:"permission"`
	Status     permissions.Status `json:"status"`
	score      int
}

// searchScore is how well t matches the query's words: a word that is a
// whole part of the name counts 4, part of the toolset's name 3, within
// the name 2, a word of the description 1.
func searchScore(t manifest.Tool, words []string) int {
	nameParts := tokens(t.Name + " " + t.ToolName)
	desc := tokens(t.Title + " " + t.Description)
	ts := tokens(policy.ToolsetOf(t))
	score := 0
	for _, w := range words {
		switch {
		case slices.Contains(nameParts, w):
			score += 4
		case slices.Contains(ts, w):
			score += 3
		case strings.Contains(strings.ToLower(t.Name), w):
			score += 2
		}
		if slices.Contains(desc, w) {
			score++
		}
	}
	return score
}

// searchTools ranks the served tools by the query's words (searchScore).
// Ties go by name; no model. The tools that match but are left out for a
// macOS permission are named apart, with the permission: "no tool
// matches" is not said of tools that exist.
func searchTools(c *Request, table *routes.Table) *mcp.CallToolResult {
	var p struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	if err := decodeDiscoveryArgs(c.Args, &p); err != "" {
		return c.refuse(backend.RuleInvalidArguments, fmt.Sprintf("invalid arguments for %s: %s; pass {\"query\": \"words\", \"limit\": 10}", table.Discover.Search, err))
	}
	if p.Limit <= 0 {
		p.Limit = 10
	}
	p.Limit = min(p.Limit, 100)
	words := tokens(p.Query)
	if len(words) > maxSearchWords {
		words = words[:maxSearchWords] // a query is a few words; this bounds the work
	}
	var hits []searchHit
	for _, name := range table.Order {
		r, ok := table.ByName[name]
		if !ok {
			continue
		}
		t := r.Tool
		score := searchScore(t, words)
		if len(words) > 0 && score == 0 {
			continue
		}
		h := searchHit{Name: name, Description: firstLine(t.Description), Toolset: policy.ToolsetOf(t), score: score}
		var def struct {
			Annotations *mcp.ToolAnnotations `json:"annotations"`
		}
		_ = json.Unmarshal(table.Tools[name], &def)
		h.Annotations = def.Annotations
		hits = append(hits, h)
	}
	slices.SortStableFunc(hits, func(a, b searchHit) int { return b.score - a.score })
	var leftOut []leftOutHit
	for _, name := range slices.Sorted(maps.Keys(table.Blocked)) {
		b := table.Blocked[name]
		if score := searchScore(b.Tool, words); len(words) == 0 || score > 0 {
			leftOut = append(leftOut, leftOutHit{Name: name, Permission: b.Perm, Status: b.Status, score: score})
		}
	}
	slices.SortStableFunc(leftOut, func(a, b leftOutHit) int { return b.score - a.score })
	total := len(hits)
	hits = hits[:min(len(hits), p.Limit)]
	out := struct {
		Tools        []searchHit  `json:"tools"`
		Total        int          `json:"total"`
		LeftOut      []leftOutHit `json:"left_out,omitempty"`
		LeftOutTotal int          `json:"left_out_total,omitempty"`
		Next         string       `json:"next"`
	}{hits, total, leftOut[:min(len(leftOut), p.Limit)], len(leftOut), "call " + table.Discover.Describe + " for a tool's arguments, then " + table.Discover.Call}
	switch {
	case out.Tools == nil && len(leftOut) > 0:
		out.Tools = []searchHit{}
		out.Next = fmt.Sprintf("no tool served matches, but %d matching %s left out because macOS has not granted Tairseach the permission they need (left_out names each and its permission); "+
			"tell the user which permission to grant in System Settings › Privacy & Security", len(leftOut), toolsAre(len(leftOut)))
	case out.Tools == nil:
		out.Tools = []searchHit{}
		out.Next = "no tool matches; try other words, or an empty query to list every tool"
	case len(leftOut) > 0:
		out.Next += fmt.Sprintf("; %d more matching %s left out for a macOS permission not granted (left_out)", len(leftOut), toolsAre(len(leftOut)))
	}
	b, _ := json.Marshal(out)
	return check.TextResult(b)
}

// toolsAre is "tool is" or "tools are", as n says.
func toolsAre(n int) string {
	if n == 1 {
		return "tool is"
	}
	return "tools are"
}

// tokens splits s into lower-case words of letters and digits.
func tokens(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// firstLine is the first sentence or line of s, at most 160 characters.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	if len(s) > 160 {
		cut := 157
		for cut > 0 && !utf8Start(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
