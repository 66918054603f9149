package manifest

import "testing"

// TestPositions: problems and skipped tools carry where they are written,
// as a compiler's diagnostics do: the tool at fault (its name, or the
// field or subschema the problem is about), a mapping without a tool, the
// manifest's id; the file's byte order mark counted in the column.
func TestPositions(t *testing.T) {
	a := []byte("\xEF\xBB\xBF{\n" +
		`  "id": "x",` + "\n" +
		`  "tools": [` + "\n" +
		`    {"name": "a"},` + "\n" +
		`    {"description": "d",` + "\n" +
		`     "name": "b", "inputSchema": {"type": "object"}},` + "\n" +
		`    {"name": "c", "timeoutMs": -1},` + "\n" +
		`    {"name": "d", "inputSchema": {"type": "object", "properties": {"n": {"type": "nope"}}}},` + "\n" +
		`    {"name": "e", "mcp_expose": false}` + "\n" +
		`  ],` + "\n" +
		`  "implementation": {"methods": {"a": "a", "c": "c", "d": "d", "orphan": "o"}}` + "\n" +
		"}\n")
	b := []byte(`{"id": "x", "tools": [{"name": "a"}], "implementation": {"methods": {"a": "other"}}}`)
	fa, err := ParseFile("a.json", a, Options{Prefix: "p_"})
	if err != nil {
		t.Fatal(err)
	}
	fb, err := ParseFile("b.json", b, Options{Prefix: "p_"})
	if err != nil {
		t.Fatal(err)
	}
	reg := Build([]*File{fa, fb})

	problems := map[string]Position{}
	for _, p := range reg.Problems {
		problems[p.File+" "+p.Tool] = p.Position
	}
	skipped := map[string]Position{}
	for _, s := range reg.Skipped {
		skipped[s.File+" "+s.ToolName] = s.Position
	}
	for _, tt := range []struct {
		what      string
		got, want Position
	}{
		{"tool b without a method: its name", problems["a.json b"], Position{6, 14}},
		{"tool b skipped", skipped["a.json b"], Position{6, 14}},
		{"negative timeoutMs: its value", problems["a.json c"], Position{7, 32}},
		{"a subschema of d that cannot be used", problems["a.json d"], Position{8, 73}},
		{"hidden tool e", skipped["a.json e"], Position{9, 14}},
		{"a method mapping without a tool: its key", problems["a.json orphan"], Position{11, 64}},
		{"the id a.json uses already", problems["b.json "], Position{1, 8}},
		{"tool a of b.json, whose name is taken", problems["b.json a"], Position{1, 32}},
		{"tool a, renamed", reg.Position("p_a"), Position{4, 14}},
		{"a tool not in the registry", reg.Position("p_zz"), Position{}},
	} {
		if tt.got != tt.want {
			t.Errorf("%s: at %d:%d, want %d:%d", tt.what, tt.got.Line, tt.got.Column, tt.want.Line, tt.want.Column)
		}
	}
}
