package manifest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"unicode/utf8"
)

var validName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// checkToolInvariants checks what ParseFile promises about every Tool.
func checkToolInvariants(t *testing.T, tool Tool) {
	t.Helper()
	if !validName.MatchString(tool.Name) || !ValidName(tool.Name) {
		t.Errorf("tool %q: invalid name", tool.Name)
	}
	for _, s := range []string{tool.Description, tool.Title, tool.Annotations.Title, tool.Method, tool.Socket, string(tool.InputSchema), string(tool.OutputSchema)} {
		if !utf8.ValidString(s) {
			t.Errorf("tool %q: invalid UTF-8 in %q", tool.Name, s)
		}
	}
	checkObjectSchema(t, tool.Name, "InputSchema", tool.InputSchema)
	if tool.OutputSchema != nil {
		checkObjectSchema(t, tool.Name, "OutputSchema", tool.OutputSchema)
	}
	if tool.Method == "" || tool.ToolName == "" {
		t.Errorf("tool %q: empty method or tool name: %+v", tool.Name, tool)
	}
	if tool.Permissions != nil && (len(tool.Permissions) == 0 || !slices.IsSorted(tool.Permissions) ||
		len(slices.Compact(slices.Clone(tool.Permissions))) != len(tool.Permissions) || slices.Contains(tool.Permissions, "")) {
		t.Errorf("tool %q: permissions %q are not sorted, unique and non-empty", tool.Name, tool.Permissions)
	}
}

func checkObjectSchema(t *testing.T, name, field string, schema json.RawMessage) {
	t.Helper()
	var top map[string]json.RawMessage
	if err := json.Unmarshal(schema, &top); err != nil {
		t.Errorf("tool %q: %s %s is not a JSON object: %v", name, field, schema, err)
		return
	}
	var typ string
	if err := json.Unmarshal(top["type"], &typ); err != nil || typ != "object" {
		t.Errorf("tool %q: %s %s: type is not \"object\"", name, field, schema)
	}
}

func FuzzParseFile(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("testdata", "parse", "*.json"))
	if err != nil || len(seeds) == 0 {
		f.Fatalf("no seeds in testdata/parse: %v", err)
	}
	for _, p := range seeds {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, "tairseach_")
	}
	f.Add([]byte(`{"tools":[{"name":"a","inputSchema":{}}],"implementation":{"methods":{"a":"a"}}}`), "")
	f.Add([]byte(`{"requires":{"permissions":[{"name":"camera"},"x",3]},"tools":[{"name":"a","requires":{"permissions":[{"name":"camera"},{"name":"a"}]}}],"implementation":{"methods":{"a":"a"}}}`), "")
	f.Add([]byte("{\"tools\":[{\"name\":\"a\xff\",\"description\":\"\xc3\",\"inputSchema\":{\"properties\":{\"\xfe\":{}}}}],\"implementation\":{\"type\":\"script\",\"toolBindings\":{\"a\xff\":{}}}}"), "")
	f.Fuzz(func(t *testing.T, data []byte, prefix string) {
		file, err := ParseFile("fuzz/x.json", data, Options{Prefix: prefix, MaxFileSize: 1 << 16})
		if err != nil {
			if _, ok := err.(*FileError); !ok {
				t.Fatalf("error %T is not a *FileError: %v", err, err)
			}
			if file != nil {
				t.Fatal("non-nil File with an error")
			}
			return
		}
		for _, tool := range file.Tools {
			checkToolInvariants(t, tool)
		}
		// Merging never loses or invents a tool.
		r := Build([]*File{file})
		if len(r.Tools)+len(r.Skipped) != len(file.Tools)+len(file.Skipped) {
			t.Fatalf("Build: %d tools + %d skipped from %d + %d", len(r.Tools), len(r.Skipped), len(file.Tools), len(file.Skipped))
		}
	})
}
