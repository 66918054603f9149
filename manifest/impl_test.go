package manifest

import (
	"errors"
	"strings"
	"testing"
)

// TestImplementationTypes: internal manifests map tools through methods;
// script and proxy manifests through toolBindings, under the tool name,
// unless methods says otherwise.
func TestImplementationTypes(t *testing.T) {
	tools := `"tools":[{"name":"a"},{"name":"b"},{"name":"c"}]`
	for _, tc := range []struct {
		name, impl  string
		wantMethods map[string]string // exposed tool → method
		problems    []Problem
	}{
		{
			name:        "internal",
			impl:        `{"type":"internal","methods":{"a":"x.a","b":"x.b"}}`,
			wantMethods: map[string]string{"a": "x.a", "b": "x.b"},
			problems:    []Problem{{File: "m.json", Tool: "c", Severity: Warning, Message: "no entry in implementation.methods"}},
		},
		{
			name:        "no type is internal",
			impl:        `{"methods":{"a":"x.a","b":"x.b","c":"x.c"}}`,
			wantMethods: map[string]string{"a": "x.a", "b": "x.b", "c": "x.c"},
		},
		{
			name:        "script",
			impl:        `{"type":"script","runtime":"python3","entrypoint":"s.py","args":["-u"],"env":{"K":"v"},"toolBindings":{"a":{"action":"go"},"b":null,"c":"anything"}}`,
			wantMethods: map[string]string{"a": "a", "b": "b", "c": "c"},
		},
		{
			name:        "proxy",
			impl:        `{"type":"proxy","baseUrl":"https://api.example.com","auth":{"type":"bearer"},"toolBindings":{"a":{"method":"GET","path":"/a"},"b":{}}}`,
			wantMethods: map[string]string{"a": "a", "b": "b"},
			problems: []Problem{{File: "m.json", Tool: "c", Severity: Warning,
				Message: "tool c is not exposed: no entry in implementation.toolBindings of this proxy manifest"}},
		},
		{
			name:        "script with a method override",
			impl:        `{"type":"script","methods":{"a":"custom.a"},"toolBindings":{"a":{},"b":{},"c":{}}}`,
			wantMethods: map[string]string{"a": "custom.a", "b": "b", "c": "c"},
		},
		{
			name:        "binding without tool",
			impl:        `{"type":"script","toolBindings":{"a":{},"b":{},"c":{},"zz":{}}}`,
			wantMethods: map[string]string{"a": "a", "b": "b", "c": "c"},
			problems:    []Problem{{File: "m.json", Tool: "zz", Severity: Warning, Message: "tool binding for zz has no tool"}},
		},
		{
			name:        "bindings in an internal manifest",
			impl:        `{"type":"internal","methods":{"a":"x.a","b":"x.b","c":"x.c"},"toolBindings":{"a":{}}}`,
			wantMethods: map[string]string{"a": "x.a", "b": "x.b", "c": "x.c"},
			problems:    []Problem{{File: "m.json", Severity: Warning, Message: "implementation.toolBindings is ignored"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := ParseFile("m.json", []byte(`{"id":"m",`+tools+`,"implementation":`+tc.impl+`}`), Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, tool := range f.Tools {
				got[tool.ToolName] = tool.Method
			}
			if len(got) != len(tc.wantMethods) {
				t.Errorf("tools %v, want %v", got, tc.wantMethods)
			}
			for k, v := range tc.wantMethods {
				if got[k] != v {
					t.Errorf("tool %s: method %q, want %q", k, got[k], v)
				}
			}
			checkProblems(t, f.Problems, tc.problems)
		})
	}
}

func TestUnknownImplementationType(t *testing.T) {
	data := "{\"id\":\"m\",\"tools\":[{\"name\":\"a\"}],\n \"implementation\": {\"type\": \"lambda\", \"toolBindings\": {\"a\": {}}}}"
	_, err := ParseFile("m.json", []byte(data), Options{})
	var fe *FileError
	if !errors.As(err, &fe) {
		t.Fatalf("ParseFile: %v, want a *FileError", err)
	}
	if fe.Line != 2 || fe.Column != 29 || !strings.Contains(fe.Error(), `implementation.type "lambda" is not one of internal, script, proxy`) {
		t.Errorf("error %q at %d:%d, want the type at 2:29", fe, fe.Line, fe.Column)
	}
	// toolBindings must be an object keyed by tool name.
	_, err = ParseFile("m.json", []byte(`{"tools":[],"implementation":{"type":"script","toolBindings":["a"]}}`), Options{})
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "toolBindings") {
		t.Errorf("toolBindings array: %v, want a FileError about toolBindings", err)
	}
}
