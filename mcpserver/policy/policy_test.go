package policy

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/geilt/tairseach-mcp/manifest"
)

func policyTool(id, name string, ro, destr *bool) manifest.Tool {
	mcpName, _ := manifest.MCPName("tairseach_", name)
	return manifest.Tool{Name: mcpName, ToolName: name, ManifestID: id, File: id + ".json",
		Annotations: manifest.Annotations{ReadOnlyHint: ro, DestructiveHint: destr}}
}

func TestPolicyHides(t *testing.T) {
	yes, no := new(bool), new(bool)
	*yes = true
	for _, c := range []struct {
		p    Policy
		tool manifest.Tool
		want string // "" served, else a part of the reason
	}{
		{Policy{}, policyTool("notes", "notes.delete", nil, nil), ""},
		{Policy{Toolsets: []string{"mail"}}, policyTool("notes", "notes.read", yes, nil), `hidden by --toolsets (its toolset "notes" is not among mail)`},
		{Policy{Toolsets: []string{"notes"}}, policyTool("notes", "notes.read", yes, nil), ""},
		{Policy{Toolsets: []string{"x"}}, manifest.Tool{Name: "a", File: "dir/x.json"}, ""}, // no id: the file's name
		{Policy{ReadOnly: true}, policyTool("notes", "notes.read", yes, nil), ""},
		{Policy{ReadOnly: true}, policyTool("notes", "notes.read", yes, no), ""},
		{Policy{ReadOnly: true}, policyTool("notes", "notes.write", nil, nil), "hidden by --read-only (it is not annotated readOnlyHint)"},
		{Policy{ReadOnly: true}, policyTool("notes", "notes.write", no, nil), "hidden by --read-only (it is not annotated readOnlyHint)"},
		{Policy{ReadOnly: true}, policyTool("notes", "notes.odd", yes, yes), "hidden by --read-only (it is annotated destructiveHint)"},
		{Policy{Tools: []string{"notes.*"}}, policyTool("notes", "notes.read", nil, nil), ""},
		{Policy{Tools: []string{"tairseach_notes_*"}}, policyTool("notes", "notes.read", nil, nil), ""},
		{Policy{Tools: []string{"mail.*"}}, policyTool("notes", "notes.read", nil, nil), "hidden by --tools (neither tairseach_notes_read nor notes.read matches mail.*)"},
		{Policy{ExcludeTools: []string{"*.delete"}}, policyTool("notes", "notes.delete", nil, nil), `hidden by --exclude-tools (it matches "*.delete")`},
		{Policy{ExcludeTools: []string{"*.delete"}}, policyTool("notes", "notes.read", nil, nil), ""},
	} {
		got := c.p.Hides(c.tool)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%+v hides %s: %q, want %q", c.p, c.tool.Name, got, c.want)
		}
	}
}

// TestPolicyNarrowNeverWidens: for every server policy and header selection
// of a small space, a tool the narrowed policy serves is served by both.
func TestPolicyNarrowNeverWidens(t *testing.T) {
	yes := new(bool)
	*yes = true
	tools := []manifest.Tool{
		policyTool("notes", "notes.read", yes, nil), policyTool("notes", "notes.delete", nil, yes),
		policyTool("mail", "mail.search", yes, nil), policyTool("mail", "mail.send", nil, nil),
	}
	var space []Policy
	for _, ts := range [][]string{nil, {"notes"}, {"mail"}, {"notes", "mail"}} {
		for _, ro := range []bool{false, true} {
			for _, inc := range [][]string{nil, {"*.read", "mail.*"}} {
				for _, exc := range [][]string{nil, {"*send"}} {
					space = append(space, Policy{Toolsets: ts, ReadOnly: ro, Tools: inc, ExcludeTools: exc})
				}
			}
		}
	}
	keys := map[string]string{}
	for _, base := range space {
		for _, h := range space {
			n := base.Narrow(h)
			for _, tool := range tools {
				if n.Hides(tool) == "" && (base.Hides(tool) != "" || h.Hides(tool) != "") {
					t.Fatalf("%+v narrowed by %+v serves %s", base, h, tool.Name)
				}
				if n.Hides(tool) != "" && base.Hides(tool) == "" && h.Hides(tool) == "" {
					t.Fatalf("%+v narrowed by %+v hides %s, which both serve", base, h, tool.Name)
				}
			}
			// Equal keys mean equal selections.
			var served []string
			for _, tool := range tools {
				served = append(served, fmt.Sprint(n.Hides(tool) == ""))
			}
			sel := strings.Join(served, ",")
			if prev, ok := keys[n.Key()]; ok && prev != sel {
				t.Fatalf("key %s is two selections", n.Key())
			}
			keys[n.Key()] = sel
		}
	}
}

func TestFromHeaders(t *testing.T) {
	h := http.Header{}
	h.Add("X-MCP-Toolsets", "notes, mail")
	h.Add("X-MCP-Toolsets", "notes")
	h.Set("X-MCP-Readonly", "TRUE")
	h.Set("X-MCP-Tools", "notes.*")
	p, err := FromHeaders(h)
	if err != nil || strings.Join(p.Toolsets, ",") != "notes,mail" || !p.ReadOnly || len(p.Tools) != 1 {
		t.Errorf("FromHeaders: %+v, %v", p, err)
	}
	if !strings.Contains(p.Hides(policyTool("x", "x.y", nil, nil)), "the X-MCP-Toolsets header") {
		t.Errorf("a header's reason does not name the header: %q", p.Hides(policyTool("x", "x.y", nil, nil)))
	}
	for _, bad := range []http.Header{{"X-Mcp-Readonly": {"maybe"}}, {"X-Mcp-Exclude-Tools": {"[a"}}} {
		if _, err := FromHeaders(bad); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
	if p, err := FromHeaders(http.Header{"X-Mcp-Toolsets": {"all"}, "X-Mcp-Readonly": {"false"}}); err != nil || !p.IsAll() {
		t.Errorf("all/false: %+v %v", p, err)
	}
}

// TestToolsetsAllAloneFlagAndHeader: the --toolsets flag and the
// X-MCP-Toolsets header read a list by one rule: "all" alone is every
// toolset, and beside other names it is refused by both, naming the one
// that said it.
func TestToolsetsAllAloneFlagAndHeader(t *testing.T) {
	for _, c := range []struct {
		list string
		want []string // nil: every toolset
		bad  bool
	}{
		{"all", nil, false},
		{" all ,all", nil, false},
		{"notes, mail", []string{"notes", "mail"}, false},
		{"all,notes", nil, true},
		{"notes,all", nil, true},
	} {
		flag, ferr := ParseToolsets("--toolsets", c.list)
		h, herr := FromHeaders(http.Header{"X-Mcp-Toolsets": {c.list}})
		if (ferr != nil) != c.bad || (herr != nil) != c.bad {
			t.Errorf("%q: flag error %v, header error %v; want an error: %v", c.list, ferr, herr, c.bad)
			continue
		}
		if c.bad {
			if !strings.Contains(ferr.Error(), "--toolsets") || !strings.Contains(herr.Error(), HeaderToolsets) {
				t.Errorf("%q: the errors do not name their source: %v; %v", c.list, ferr, herr)
			}
			continue
		}
		if fmt.Sprint(flag) != fmt.Sprint(c.want) || fmt.Sprint(h.Toolsets) != fmt.Sprint(c.want) {
			t.Errorf("%q: flag %q, header %q, want %q", c.list, flag, h.Toolsets, c.want)
		}
	}
}
