package manifest

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// manifestJSONFor writes a manifest whose tools map to the given methods
// ("tool=method" pairs) and optional socket.
func manifestJSONFor(id, socket string, pairs ...string) string {
	var tools, methods []string
	for _, p := range pairs {
		tool, method, _ := strings.Cut(p, "=")
		tools = append(tools, fmt.Sprintf(`{"name":%q}`, tool))
		methods = append(methods, fmt.Sprintf(`%q:%q`, tool, method))
	}
	return fmt.Sprintf(`{"id":%q,"tools":[%s],"implementation":{"socket":%q,"methods":{%s}}}`,
		id, strings.Join(tools, ","), socket, strings.Join(methods, ","))
}

func parseAll(t testing.TB, prefix string, files map[string]string) []*File {
	t.Helper()
	var out []*File
	for path, data := range files {
		f, err := ParseFile(path, []byte(data), Options{Prefix: prefix})
		if err != nil {
			t.Fatalf("ParseFile(%s): %v", path, err)
		}
		out = append(out, f)
	}
	return out
}

func TestBuild(t *testing.T) {
	type exposed struct{ name, file, method string }
	tests := []struct {
		name     string
		files    map[string]string
		tools    []exposed
		skipped  []Skipped
		problems []Problem // Message is a substring
	}{
		{
			name: "core and integration pair collapse to one name",
			files: map[string]string{
				"core/jira.json":         manifestJSONFor("jira", "", "jira.issues.get=jira.issues.get"),
				"integrations/jira.json": manifestJSONFor("jira-int", "", "jira_issues_get=jira.issues.get"),
			},
			tools: []exposed{{"t_jira_issues_get", "core/jira.json", "jira.issues.get"}},
			skipped: []Skipped{{Name: "t_jira_issues_get", ToolName: "jira_issues_get", File: "integrations/jira.json",
				Reason: Duplicate, Detail: "duplicate of t_jira_issues_get (jira.issues.get) in core/jira.json"}},
		},
		{
			name: "different method is a conflict",
			files: map[string]string{
				"a.json": manifestJSONFor("a", "", "x.y=one"),
				"b.json": manifestJSONFor("b", "", "x_y=two"),
			},
			tools: []exposed{{"t_x_y", "a.json", "one"}},
			skipped: []Skipped{{Name: "t_x_y", ToolName: "x_y", File: "b.json",
				Reason: Conflict, Detail: "t_x_y is already x.y in a.json, calling one"}},
			problems: []Problem{{File: "b.json", Tool: "x_y", Severity: Warning,
				Message: "tool x_y is not exposed: its name t_x_y is taken by x.y in a.json, which calls one instead of two"}},
		},
		{
			name: "different socket is a conflict",
			files: map[string]string{
				"a.json": manifestJSONFor("a", "", "x=m"),
				"b.json": manifestJSONFor("b", "/run/b.sock", "x=m"),
			},
			tools:    []exposed{{"t_x", "a.json", "m"}},
			skipped:  []Skipped{{Name: "t_x", ToolName: "x", File: "b.json", Reason: Conflict, Detail: "t_x is already x in a.json, calling m"}},
			problems: []Problem{{File: "b.json", Tool: "x", Severity: Warning, Message: "which calls m instead of m on /run/b.sock"}},
		},
		{
			name: "same tool twice in one file, first wins",
			files: map[string]string{
				"a.json": `{"id":"a","tools":[{"name":"x","description":"first"},{"name":"x","description":"second"}],"implementation":{"methods":{"x":"m"}}}`,
			},
			tools:   []exposed{{"t_x", "a.json", "m"}},
			skipped: []Skipped{{Name: "t_x", ToolName: "x", File: "a.json", Reason: Duplicate, Detail: "duplicate of t_x (x) in a.json"}},
		},
		{
			name: "first file in byte order of slash paths wins",
			files: map[string]string{
				"a/x.json":   manifestJSONFor("ax", "", "x=from-a"),
				"a-b/x.json": manifestJSONFor("abx", "", "x=from-a-b"), // '-' sorts before '/'
			},
			tools:    []exposed{{"t_x", "a-b/x.json", "from-a-b"}},
			skipped:  []Skipped{{Name: "t_x", ToolName: "x", File: "a/x.json", Reason: Conflict, Detail: "t_x is already x in a-b/x.json, calling from-a-b"}},
			problems: []Problem{{File: "a/x.json", Tool: "x", Severity: Warning, Message: "taken by x in a-b/x.json"}},
		},
		{
			name: "duplicate manifest id",
			files: map[string]string{
				"core/oura.json":         manifestJSONFor("oura", "", "oura.sleep=oura.sleep"),
				"integrations/oura.json": manifestJSONFor("oura", "", "oura.activity=oura.activity"),
			},
			tools: []exposed{{"t_oura_activity", "integrations/oura.json", "oura.activity"}, {"t_oura_sleep", "core/oura.json", "oura.sleep"}},
			problems: []Problem{{File: "integrations/oura.json", Severity: Warning,
				Message: `manifest id "oura" is also used by core/oura.json`}},
		},
		{
			name: "tools sorted by name across files, skips and problems kept",
			files: map[string]string{
				"b.json": `{"id":"b","tools":[{"name":"zeta"},{"name":"alpha"},{"name":"hidden","mcp_expose":false}],"implementation":{"methods":{"zeta":"z","alpha":"a","hidden":"h"}}}`,
				"a.json": `{"id":"a","tools":[{"name":"mid"},{"name":"lost"}],"implementation":{"methods":{"mid":"m"}}}`,
			},
			tools: []exposed{{"t_alpha", "b.json", "a"}, {"t_mid", "a.json", "m"}, {"t_zeta", "b.json", "z"}},
			skipped: []Skipped{
				{Name: "t_lost", ToolName: "lost", File: "a.json", Reason: NoMethod, Detail: "no entry in implementation.methods"},
				{Name: "t_hidden", ToolName: "hidden", File: "b.json", Reason: Hidden, Detail: "mcp_expose is false"},
			},
			problems: []Problem{{File: "a.json", Tool: "lost", Severity: Warning, Message: "not exposed"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Build(parseAll(t, "t_", tt.files))
			var got []exposed
			for _, tool := range r.Tools {
				got = append(got, exposed{tool.Name, tool.File, tool.Method})
			}
			if !reflect.DeepEqual(got, tt.tools) {
				t.Errorf("tools:\n got %v\nwant %v", got, tt.tools)
			}
			if got := unplaced(r.Skipped); !reflect.DeepEqual(got, tt.skipped) {
				t.Errorf("skipped:\n got %+v\nwant %+v", got, tt.skipped)
			}
			checkProblems(t, r.Problems, tt.problems)
			var paths []string
			for p := range tt.files {
				paths = append(paths, p)
			}
			slices.Sort(paths)
			if !slices.Equal(r.Files, paths) {
				t.Errorf("Files = %v, want %v", r.Files, paths)
			}
			for _, want := range tt.tools {
				if tool, ok := r.Lookup(want.name); !ok || tool.Method != want.method {
					t.Errorf("Lookup(%q) = %+v, %v", want.name, tool, ok)
				}
			}
		})
	}
}

func TestBuildOrderIndependent(t *testing.T) {
	files := parseAll(t, "t_", map[string]string{
		"c.json":   manifestJSONFor("c", "", "x=c", "y=y"),
		"a.json":   manifestJSONFor("a", "", "x=a"),
		"b/z.json": manifestJSONFor("b", "", "y=y", "z=z"),
		"b.json":   manifestJSONFor("b", "", "x=b"),
	})
	want := Build(files)
	for i := range 8 {
		shuffled := slices.Clone(files)
		for j := range shuffled {
			k := (j*7 + i*3) % len(shuffled)
			shuffled[j], shuffled[k] = shuffled[k], shuffled[j]
		}
		shuffled = append(shuffled, nil) // nil files are ignored
		if got := Build(shuffled); !reflect.DeepEqual(got, want) {
			t.Fatalf("Build depends on input order:\n got %+v\nwant %+v", got, want)
		}
	}
	if tool, _ := want.Lookup("t_x"); tool.File != "a.json" {
		t.Errorf("t_x comes from %s, want a.json", tool.File)
	}
}

func TestLookup(t *testing.T) {
	built := Build(parseAll(t, "", map[string]string{"a.json": manifestJSONFor("a", "", "b=b", "a=a", "c=c")}))
	unindexed := &Registry{Tools: built.Tools}
	tests := []struct {
		name string
		r    *Registry
		key  string
		ok   bool
	}{
		{"built hit", built, "b", true},
		{"built miss", built, "d", false},
		{"unindexed hit", unindexed, "c", true},
		{"unindexed miss", unindexed, "0", false},
		{"nil registry", nil, "a", false},
		{"empty registry", &Registry{}, "a", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, ok := tt.r.Lookup(tt.key)
			if ok != tt.ok || (ok && tool.Name != tt.key) {
				t.Errorf("Lookup(%q) = %q, %v; want ok=%v", tt.key, tool.Name, ok, tt.ok)
			}
		})
	}
}
