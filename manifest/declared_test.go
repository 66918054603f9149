package manifest_test

import (
	"strings"
	"testing"

	"github.com/geilt/tairseach-mcp/manifest"
)

func TestDeclaredResourcesAndPrompts(t *testing.T) {
	const head = `{"id": "c",
 "tools": [
  {"name": "c.get", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}},
  {"name": "c.del", "inputSchema": {"type": "object"}}
 ],
 "implementation": {"methods": {"c.get": "c.get", "c.del": "c.del"}},
`
	tests := []struct {
		name, decl string
		resources  int
		prompts    int
		problem    string
	}{
		{"fixed and template", `"resources": [{"uri": "t://c", "name": "c", "method": "c.get"},
		  {"uriTemplate": "t://c/{id}", "name": "one", "method": "c.get", "complete": {"id": "c.get"}}]`, 2, 0, ""},
		{"foreign method", `"resources": [{"uri": "t://c", "name": "c", "method": "mail.list"}]`, 0, 0, `method "mail.list" is not one of this manifest's methods`},
		{"both uri and template", `"resources": [{"uri": "t://c", "uriTemplate": "t://c/{id}", "name": "c", "method": "c.get"}]`, 0, 0, "exactly one"},
		{"relative", `"resources": [{"uri": "c", "name": "c", "method": "c.get"}]`, 0, 0, "not an absolute URI"},
		{"template without variable", `"resources": [{"uriTemplate": "t://c", "name": "c", "method": "c.get"}]`, 0, 0, "has no {variable}"},
		{"operator", `"resources": [{"uriTemplate": "t://c/{+path}", "name": "c", "method": "c.get"}]`, 0, 0, "only simple {name}"},
		{"complete not read-only", `"resources": [{"uriTemplate": "t://c/{id}", "name": "c", "method": "c.get", "complete": {"id": "c.del"}}]`, 0, 0, "not read-only"},
		{"complete unknown variable", `"resources": [{"uriTemplate": "t://c/{id}", "name": "c", "method": "c.get", "complete": {"x": "c.get"}}]`, 0, 0, "not a variable"},
		{"prompt", `"prompts": [{"name": "p", "template": "hi {{x}}", "arguments": [{"name": "x", "complete": "c.get"}]}]`, 0, 1, ""},
		{"prompt without template", `"prompts": [{"name": "p"}]`, 0, 0, `no "template"`},
		{"prompt bad name", `"prompts": [{"name": "a b", "template": "x"}]`, 0, 0, "must be letters"},
		{"wrong type", `"resources": {"uri": "x"}`, 0, 0, "resources and prompts are left out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := manifest.ParseFile("c.json", []byte(head+tt.decl+"}"), manifest.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Tools) != 2 {
				t.Fatalf("tools lost: %d", len(f.Tools))
			}
			if len(f.Resources) != tt.resources || len(f.Prompts) != tt.prompts {
				t.Fatalf("%d resources, %d prompts; problems %v", len(f.Resources), len(f.Prompts), f.Problems)
			}
			var msgs []string
			for _, p := range f.Problems {
				msgs = append(msgs, p.String())
			}
			all := strings.Join(msgs, "\n")
			if tt.problem == "" && all != "" || !strings.Contains(all, tt.problem) {
				t.Fatalf("problems %q, want %q", all, tt.problem)
			}
			if tt.problem != "" && tt.name != "wrong type" && !strings.Contains(all, "(c.json:") {
				t.Fatalf("no position in %q", all)
			}
		})
	}
}

func TestDeclaredDuplicates(t *testing.T) {
	mk := func(path string) *manifest.File {
		f, err := manifest.ParseFile(path, []byte(`{"id":"`+path+`","tools":[{"name":"x.get","inputSchema":{"type":"object"}}],
			"implementation":{"methods":{"x.get":"x.get"}},
			"resources":[{"uri":"t://x","name":"x","method":"x.get"}],
			"prompts":[{"name":"p","template":"t"}]}`), manifest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	reg := manifest.Build([]*manifest.File{mk("b.json"), mk("a.json")})
	if len(reg.Resources) != 1 || reg.Resources[0].File != "a.json" || len(reg.Prompts) != 1 {
		t.Fatalf("resources %+v prompts %+v", reg.Resources, reg.Prompts)
	}
	if reg.IDs["b.json"] != "b.json" {
		t.Fatalf("ids %v", reg.IDs)
	}
}
