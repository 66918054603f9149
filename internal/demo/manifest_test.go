package demo_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/geilt/tairseach-mcp/internal/demo"
)

// TestExampleManifests checks manifests.example against the demo: every
// exposed tool maps to a method the demo serves, sample arguments satisfy its
// inputSchema, and what the demo returns satisfies its outputSchema (the
// bridge validates results against it).
func TestExampleManifests(t *testing.T) {
	samples := map[string][]string{
		"server.status":   {`{}`},
		"contacts.list":   {`{}`, `{"limit":2,"offset":24}`, `{"offset":100}`},
		"contacts.search": {`{"query":"a"}`, `{"query":"nobody-at-all","limit":1}`},
		"contacts.get":    {`{"id":"c-001"}`, `{"id":"c-008"}`},
		"demo.echo":       {`{}`, `{"a":1,"b":["x"]}`},
		"demo.slow":       {`{"ms":1}`},
		"demo.fail":       {`{}`},
		"demo.blob":       {`{}`, `{"bytes":10}`},
		"word_count":      {`{"text":""}`, `{"text":"two words\nand a line"}`},
		"screen.capture":  {`{}`, `{"format":"png"}`},

		"permissions.list":    {`{}`},
		"permissions.check":   {`{"permission":"contacts"}`, `{"permission":"screen_recording"}`},
		"permissions.request": {`{"permission":"camera"}`},
	}
	failing := map[string]int{"demo.fail": -32001}

	files, err := filepath.Glob(filepath.Join("..", "..", "manifests.example", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no example manifests: %v", err)
	}
	s := startServer(t, demo.Options{CaptureDir: t.TempDir()})
	c := dial(t, s.path)
	var status struct{ Methods []string }
	c.result("server.status", "", &status)

	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			ID    string `json:"id"`
			Tools []struct {
				Name         string             `json:"name"`
				Description  string             `json:"description"`
				MCPExpose    *bool              `json:"mcp_expose"`
				InputSchema  *jsonschema.Schema `json:"inputSchema"`
				OutputSchema *jsonschema.Schema `json:"outputSchema"`
			} `json:"tools"`
			Implementation struct {
				Type         string                     `json:"type"`
				Methods      map[string]string          `json:"methods"`
				ToolBindings map[string]json.RawMessage `json:"toolBindings"`
			} `json:"implementation"`
		}
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, tool := range m.Tools {
			t.Run(tool.Name, func(t *testing.T) {
				c.t = t
				method := m.Implementation.Methods[tool.Name]
				if _, bound := m.Implementation.ToolBindings[tool.Name]; bound && method == "" && m.Implementation.Type == "script" {
					method = tool.Name // served under its tool name
				}
				if method == "" || tool.Description == "" || tool.InputSchema == nil || tool.OutputSchema == nil {
					t.Fatalf("%s: incomplete tool (method %q)", file, method)
				}
				in, err := tool.InputSchema.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
				if err != nil {
					t.Fatalf("inputSchema: %v", err)
				}
				out, err := tool.OutputSchema.Resolve(nil)
				if err != nil {
					t.Fatalf("outputSchema: %v", err)
				}
				if tool.MCPExpose != nil && !*tool.MCPExpose {
					return // hidden: the bridge never calls it
				}
				if !slices.Contains(status.Methods, method) {
					t.Fatalf("method %s is not served by the demo", method)
				}
				if len(samples[tool.Name]) == 0 {
					t.Fatalf("no sample arguments for %s in this test", tool.Name)
				}
				for _, args := range samples[tool.Name] {
					var v map[string]any
					json.Unmarshal([]byte(args), &v)
					if err := in.Validate(v); err != nil {
						t.Errorf("args %s do not satisfy inputSchema: %v", args, err)
					}
					r := c.call(method, args)
					if code, ok := failing[tool.Name]; ok {
						if r.Error == nil || r.Error.Code != code {
							t.Errorf("args %s: got %s / %+v, want error %d", args, r.Result, r.Error, code)
						}
						continue
					}
					if r.Error != nil {
						t.Fatalf("args %s: error %+v", args, *r.Error)
					}
					var res map[string]any
					if err := json.Unmarshal(r.Result, &res); err != nil {
						t.Fatalf("args %s: result %s is not an object: %v", args, r.Result, err)
					}
					if err := out.Validate(res); err != nil {
						t.Errorf("args %s: result does not satisfy outputSchema: %v\n%s", args, err, r.Result)
					}
				}
			})
		}
	}
}
