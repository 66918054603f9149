package check

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/geilt/tairseach-mcp/manifest"
)

// FuzzCheckArgs checks arbitrary arguments against the inputSchemas of the
// real manifest corpus: Input.Check never panics, rejects whatever is not a
// JSON object with the reason, and gives the same verdict every time; Args
// agrees with it on arguments without repeated members.
func FuzzCheckArgs(f *testing.F) {
	dir := filepath.Join("..", "..", "manifest", "testdata", "tairseach-manifests")
	reg, err := manifest.Load(dir, manifest.Options{Prefix: "tairseach_"})
	if err != nil {
		f.Fatalf("the reference corpus is missing (%v): it lives in manifest/testdata/tairseach-manifests", err)
	}
	inputs := map[string]*Input{}
	schemas := map[string]json.RawMessage{}
	var names []string
	for _, t := range reg.Tools {
		inputs[t.Name], schemas[t.Name] = NewInput(t.InputSchema), t.InputSchema
		names = append(names, t.Name)
	}
	slices.Sort(names)
	if len(names) < 50 {
		f.Fatalf("only %d tools with a compiled inputSchema in the corpus", len(names))
	}

	for i, name := range names {
		f.Add(uint16(i), []byte(`{}`))
		f.Add(uint16(i), exampleArgs(schemas[name]))
	}
	seeds, err := filepath.Glob(filepath.Join("testdata", "checkargs", "*"))
	if err != nil || len(seeds) == 0 {
		f.Fatalf("no seeds in testdata/checkargs: %v", err)
	}
	for _, p := range seeds {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		for i := range names {
			f.Add(uint16(i), data)
		}
	}
	f.Fuzz(func(t *testing.T, tool uint16, args []byte) {
		name := names[int(tool)%len(names)]
		in := inputs[name]
		msg, err := in.Check(args)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var v any
		switch err := json.Unmarshal(args, &v); {
		case err != nil:
			if !strings.HasPrefix(msg, "not JSON: ") {
				t.Fatalf("%s: args %q are not JSON, but checkArgs said %q", name, args, msg)
			}
			return
		case !isObject(v):
			if msg != "arguments must be a JSON object" {
				t.Fatalf("%s: args %q are not an object, but checkArgs said %q", name, args, msg)
			}
		}
		// Which of several wrong arguments is named depends on map order in
		// jsonschema-go; whether the arguments are valid does not.
		if again, _ := in.Check(args); (again == "") != (msg == "") {
			t.Fatalf("%s: checkArgs(%q) said %q, then %q", name, args, msg, again)
		}
		if s := string(bytes.TrimSpace(args)); s != "" && s != "null" {
			if _, dup := duplicateKey(args); !dup && !bytes.Contains(args, []byte("wait_for_previous")) && !bytes.Contains(args, []byte(`\u`)) {
				if _, got, _ := Args(in, args); (got == "") != (msg == "") {
					t.Fatalf("%s: Args(%q) says %q, Check %q", name, args, got, msg)
				}
			}
		}
	})
}

func isObject(v any) bool {
	_, ok := v.(map[string]any)
	return ok
}
