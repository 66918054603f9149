package check

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/geilt/tairseach-mcp/internal/jsonscan"
	"github.com/geilt/tairseach-mcp/manifest"
)

// quickSchemas exercise every keyword the quick check understands.
var quickSchemas = []string{
	`{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":10},"x":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1.5}},"required":["n"],"additionalProperties":false}`,
	`{"type":"object","properties":{"s":{"type":"string","minLength":2,"maxLength":4,"pattern":"^[a-z]+$"},"e":{"enum":["a",1,true,null]},"c":{"const":2}}}`,
	`{"type":"object","properties":{"a":{"type":"array","items":{"type":["string","null"]},"minItems":1,"maxItems":3}},"additionalProperties":{"type":"boolean"}}`,
	`{"type":"object","properties":{"o":{"type":"object","properties":{"p":{"type":"number"}},"required":["p"]}},"required":["o"],"description":"d","default":{}}`,
	`{"type":"object","properties":{"f":{"type":"string","format":"email"},"any":{}}}`,
}

// The quick check must never accept arguments that jsonschema-go rejects:
// it only lets valid calls skip the full validation.
func FuzzQuickCheck(f *testing.F) {
	reg, err := manifest.Load(filepath.Join("..", "..", "manifest", "testdata", "tairseach-manifests"), manifest.Options{Prefix: "tairseach_"})
	if err != nil {
		f.Fatalf("the reference corpus is missing (%v): it lives in manifest/testdata", err)
	}
	for _, t := range reg.Tools {
		f.Add([]byte(t.InputSchema), exampleArgs(t.InputSchema))
	}
	for _, s := range quickSchemas {
		for _, args := range []string{`{}`, `{"n":1}`, `{"n":1.5}`, `{"n":0}`, `{"n":10,"x":1.5}`, `{"n":5,"x":0.5,"y":1}`,
			`{"s":"ab"}`, `{"s":"abcde"}`, `{"s":"Ab"}`, `{"s":"é"}`, `{"e":1.0}`, `{"e":"b"}`, `{"e":null}`, `{"c":2}`, `{"c":"2"}`,
			`{"a":[]}`, `{"a":["x",null]}`, `{"a":[1]}`, `{"a":["a","b","c","d"]}`, `{"z":true}`, `{"z":1}`,
			`{"o":{"p":1}}`, `{"o":{}}`, `{"o":[]}`, `{"f":"not an email"}`, `{"any":[{"x":1}]}`} {
			f.Add([]byte(s), []byte(args))
		}
	}
	f.Fuzz(func(t *testing.T, schema, args []byte) {
		q := newQuickCheck(schema)
		if q == nil {
			return
		}
		full, err := compileSchema(schema)
		if err != nil {
			return // such a schema leaves the arguments unchecked anyway
		}
		accepted := q.acceptsArgs(args)
		v, msg := decodeArgs(args)
		if msg != "" {
			if accepted && jsonscan.Valid(args) {
				t.Fatalf("quick check accepted %s, which encoding/json refuses: %s", args, msg)
			}
			if accepted && !jsonscan.Valid(args) {
				t.Fatalf("quick check accepted %s, which is not JSON", args)
			}
			return
		}
		verdict := validateArgs(full, v)
		if accepted && verdict != "" {
			t.Fatalf("quick check accepted %s against %s; jsonschema-go says %s", args, schema, verdict)
		}
		// It reads the bytes as encoding/json decodes them: on arguments
		// that name each member once, it says yes to all jsonschema-go
		// accepts, or valid calls would pay for the full check.
		if _, dup := duplicateKey(args); !dup && !accepted && verdict == "" {
			t.Fatalf("quick check refused %s against %s, which jsonschema-go accepts", args, schema)
		}
	})
}

// Every inputSchema of the corpus but the few with keywords it leaves to
// jsonschema-go gets the quick check, and valid example arguments pass it.
func TestQuickCheckCoversCorpus(t *testing.T) {
	reg, err := manifest.Load(filepath.Join("..", "..", "manifest", "testdata", "tairseach-manifests"), manifest.Options{Prefix: "tairseach_"})
	if err != nil {
		t.Fatalf("the reference corpus is missing (%v): it lives in manifest/testdata", err)
	}
	for _, tool := range reg.Tools {
		q := newQuickCheck(tool.InputSchema)
		if q == nil {
			if !strings.Contains(string(tool.InputSchema), `"oneOf"`) {
				t.Errorf("%s: no quick check for %s", tool.Name, tool.InputSchema)
			}
			continue
		}
		args := exampleArgs(tool.InputSchema)
		full, err := compileSchema(tool.InputSchema)
		if err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
		var v any
		if err := json.Unmarshal(args, &v); err != nil {
			t.Fatal(err)
		}
		if validateArgs(full, v) == "" && !q.acceptsArgs(args) {
			t.Errorf("%s: quick check refused valid arguments %s", tool.Name, args)
		}
	}
}

func TestQuickCheckVerdicts(t *testing.T) {
	for _, tt := range []struct {
		schema int
		args   string
		ok     bool
	}{
		{0, `{"n":1}`, true}, {0, `{"n":1.0}`, true}, {0, `{"n":1.5}`, false}, {0, `{"n":11}`, false},
		{0, `{"n":2,"x":1.5}`, false}, {0, `{"n":2,"y":1}`, false}, {0, `{}`, false},
		{1, `{"s":"abc","e":true,"c":2}`, true}, {1, `{"s":"a"}`, false}, {1, `{"s":"ABC"}`, false},
		{1, `{"s":"ééé"}`, false}, {1, `{"e":"a"}`, true}, {1, `{"e":"1"}`, false}, {1, `{"c":3}`, false},
		{2, `{"a":["x",null],"z":false}`, true}, {2, `{"a":[]}`, false}, {2, `{"z":"no"}`, false},
		{3, `{"o":{"p":2.5}}`, true}, {3, `{"o":{"q":1}}`, false},
		{4, `{"f":"anything","any":{"deep":[1]}}`, true},
		// read from the bytes as encoding/json decodes them
		{1, `{"s":"a\u0062c"}`, true}, {1, `{"s":"a\u0042c"}`, false}, {0, `{"\u006e":1}`, true},
		{0, `{"n":1e0}`, true}, {0, ` { "n" : 10 , "x" : 1E-1 } `, true}, {0, `{"n":1e400}`, false},
		{0, `{"n":1,}`, false}, {0, `{"n":1} x`, false}, {0, `{"n":01}`, false}, {1, "{\"s\":\"a\xffb\"}", false},
		{1, `{"e":null,"c":2.0}`, true}, {1, `{"e":nul}`, false}, {2, `{"a":["x",]}`, false},
		{3, `{"o":{"p":1},"o":{"q":1}}`, false}, {4, `{"any":[{"x":1e400}]}`, false}, {4, `{"any":"1e400"}`, true},
	} {
		q := newQuickCheck(json.RawMessage(quickSchemas[tt.schema]))
		if q == nil {
			t.Fatalf("schema %d: no quick check", tt.schema)
		}
		if got := q.acceptsArgs([]byte(tt.args)); got != tt.ok {
			t.Errorf("schema %d, %s: accepts = %v, want %v", tt.schema, tt.args, got, tt.ok)
		}
	}
	for _, s := range []string{`{"oneOf":[{}]}`, `{"$ref":"#"}`, `{"items":[{}]}`, `{"enum":[[1]]}`, `{"pattern":"("}`,
		`{"type":"integer","minLength":-1}`, `{"properties":{"a":true}}`, `{"patternProperties":{}}`,
		// jsonschema-go refuses every instance under a $schema it does not support
		`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object"}`, `{"$schema":"https://json-schema.org/draft/2019-09/schema"}`} {
		if newQuickCheck(json.RawMessage(s)) != nil {
			t.Errorf("newQuickCheck(%s) is not nil; it must leave this schema to jsonschema-go", s)
		}
	}
}

// A schema the quick check compiles also compiles with jsonschema-go, so
// that Apply may trust the quick check to say a schema is usable.
func FuzzQuickCheckCompiles(f *testing.F) {
	for _, s := range quickSchemas {
		f.Add([]byte(s))
	}
	for _, s := range []string{`{"required":["a","a"]}`, `{"minimum":1e400}`, `{"pattern":"\\p{Greek}"}`, `{"type":["string","string"]}`,
		`{"enum":[]}`, `{"properties":{"":{}}}`, `{"items":{"items":{}}}`, `{"additionalProperties":{}}`, `{"$schema":"x"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, schema []byte) {
		if newQuickCheck(schema) == nil {
			return
		}
		if _, err := compileSchema(schema); err != nil {
			t.Fatalf("the quick check compiles %s, jsonschema-go does not: %v", schema, err)
		}
	})
}

// exampleArgs makes arguments that a schema probably accepts: a value of the
// right type for each required property, the first of an enum.
func exampleArgs(schema json.RawMessage) []byte {
	var s struct {
		Required   []string `json:"required"`
		Properties map[string]struct {
			Type any   `json:"type"`
			Enum []any `json:"enum"`
		} `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return []byte(`{}`)
	}
	args := map[string]any{}
	for _, name := range s.Required {
		p := s.Properties[name]
		if len(p.Enum) > 0 {
			args[name] = p.Enum[0]
			continue
		}
		typ, _ := p.Type.(string)
		if types, ok := p.Type.([]any); ok && len(types) > 0 {
			typ, _ = types[0].(string)
		}
		switch typ {
		case "integer":
			args[name] = 1
		case "number":
			args[name] = 1.5
		case "boolean":
			args[name] = true
		case "array":
			args[name] = []any{}
		case "object":
			args[name] = map[string]any{}
		default:
			args[name] = "x"
		}
	}
	b, err := json.Marshal(args)
	if err != nil {
		return []byte(`{}`)
	}
	return b
}
