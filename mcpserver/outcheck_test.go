package mcpserver

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/geilt/tairseach-mcp/manifest"
)

// corpusOutputSchemas returns every outputSchema of the real corpus.
func corpusOutputSchemas(t testing.TB) []json.RawMessage {
	dir := filepath.Join("..", "manifest", "testdata", "tairseach-manifests")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the reference corpus is missing (%v): it lives in manifest/testdata/tairseach-manifests", err)
	}
	reg, err := manifest.Load(dir, manifest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out []json.RawMessage
	for _, tool := range reg.Tools {
		if len(tool.OutputSchema) > 0 {
			out = append(out, tool.OutputSchema)
		}
	}
	return out
}

// agree reports whether the shallow check and jsonschema-go agree on result.
func agree(t testing.TB, schema json.RawMessage, result []byte) {
	t.Helper()
	var v any
	if json.Unmarshal(result, &v) != nil {
		return
	}
	var buf bytes.Buffer
	_ = json.Compact(&buf, result)
	result = buf.Bytes()
	oc, err := newOutputCheck(schema, compileSchema)
	if err != nil {
		t.Fatalf("schema %s: %v", schema, err)
	}
	full, _ := compileSchema(schema)
	fullErr := full.Validate(v)
	if _, isObj := v.(map[string]any); !isObj {
		fullErr = nil // the caller rejects non-objects before the check
		if oc.check(result) == "" {
			t.Fatalf("schema %s accepted non-object %s", schema, result)
		}
		return
	}
	if got := oc.check(result); (got == "") != (fullErr == nil) {
		t.Fatalf("schema %s, result %s: shallow check says %q, jsonschema-go says %v", schema, result, got, fullErr)
	}
}

func TestOutputCheckAgreesWithJSONSchema(t *testing.T) {
	results := []string{
		`{}`, `{"contacts":[],"count":0,"limit":1,"offset":0}`, `{"contacts":[],"count":"0","limit":1,"offset":0}`,
		`{"count":1.0,"contacts":[{}],"limit":2,"offset":0,"extra":true}`, `{"count":1.5}`, `{"id":"x"}`, `{"id":1}`,
		`{"query":"a","contacts":[],"count":0}`, `{"ok":true,"items":[1,2],"data":null}`, `{"deleted":true,"id":"x"}`,
		`{"permission":"contacts","status":"denied","granted":false}`, `{"events":[{"id":1}],"total":1}`, `{"a\u0062":1}`,
	}
	schemas := corpusOutputSchemas(t)
	schemas = append(schemas,
		json.RawMessage(`{"type":"object","properties":{"n":{"type":["integer","null"]},"xs":{"type":"array","items":{"type":"integer"}}},"additionalProperties":false}`),
		json.RawMessage(`{"type":"object","minProperties":2}`),
		json.RawMessage(`{"type":"object","properties":{"ab":{"type":"string"}},"required":["ab"]}`))
	for _, s := range schemas {
		for _, r := range results {
			agree(t, s, []byte(r))
		}
	}
}

func TestOutputCheckMessages(t *testing.T) {
	oc, err := newOutputCheck(json.RawMessage(`{"type":"object","required":["count","items"],"properties":{"count":{"type":"integer"},"items":{"type":"array","items":{"type":"string"}}},"additionalProperties":false}`), compileSchema)
	if err != nil {
		t.Fatal(err)
	}
	if oc.full != nil {
		t.Fatal("a shallow schema fell back to full validation")
	}
	tests := []struct{ result, want string }{
		{`{"count":1,"items":["a"]}`, ""},
		{`{"count":"1","items":[]}`, `property "count": type: "1" is not integer`},
		{`{"items":[]}`, `missing properties: ["count"]`},
		{`{"count":1,"items":[1]}`, `property "items"`},
		{`{"count":1,"items":[],"x":0}`, `unexpected additional property "x"`},
		{`[]`, "not a JSON object"},
	}
	for _, tt := range tests {
		got := oc.check([]byte(tt.result))
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("check(%s) = %q, want %q", tt.result, got, tt.want)
		}
	}
}

func FuzzOutputCheck(f *testing.F) {
	schemas := corpusOutputSchemas(f)
	for i, r := range []string{`{"contacts":[],"count":0,"limit":1,"offset":0}`, `{"id":"x","n":[1,{"a":"}"}]}`, `{"a":1e3,"b":-0.5}`} {
		f.Add(uint8(i), []byte(r))
	}
	f.Fuzz(func(t *testing.T, which uint8, result []byte) {
		agree(t, schemas[int(which)%len(schemas)], result)
	})
}

func BenchmarkOutputCheck1MB(b *testing.B) {
	oc, err := newOutputCheck(json.RawMessage(`{"type":"object","required":["data"],"properties":{"data":{"type":"string"}}}`), compileSchema)
	if err != nil {
		b.Fatal(err)
	}
	result := []byte(`{"data":"` + strings.Repeat("x", 1<<20) + `"}`)
	b.SetBytes(int64(len(result)))
	for b.Loop() {
		if p := oc.check(result); p != "" {
			b.Fatal(p)
		}
	}
}
