package manifest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// doubling returns a schema whose $defs each apply the next one twice:
// without a bound on its expansion, validating it takes 2^n steps.
func doubling(n int) string {
	var defs []string
	for i := range n {
		defs = append(defs, fmt.Sprintf(`"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]}`, i, i+1, i+1))
	}
	defs = append(defs, fmt.Sprintf(`"d%d":{"type":"string"}`, n))
	return `{"type":"object","properties":{"x":{"$ref":"#/$defs/d0"}},"$defs":{` + strings.Join(defs, ",") + `}}`
}

// nested returns an object schema with n levels of "properties" under it.
func nested(n int) string {
	return `{"type":"object"` + strings.Repeat(`,"properties":{"a":{"type":"object"`, n) + strings.Repeat("}}", n) + "}"
}

func TestCheckSchema(t *testing.T) {
	for _, tc := range []struct {
		name, schema, want string // want: "" for accepted, else a substring of the error
	}{
		{"plain", `{"type":"object","properties":{"s":{"type":"string","pattern":"^a+$"},"n":{"type":["integer","null"]}},"required":["s"]}`, ""},
		{"shared definition", `{"type":"object","properties":{"a":{"$ref":"#/$defs/s"},"b":{"$ref":"#/$defs/s"}},"$defs":{"s":{"type":"string"}}}`, ""},
		{"anchor", `{"type":"object","properties":{"a":{"$ref":"#str"}},"$defs":{"s":{"$anchor":"str","type":"string"}}}`, ""},
		{"root id", `{"$id":"https://example.com/s.json","type":"object","properties":{"a":{"$ref":"https://example.com/s.json#/$defs/s"}},"$defs":{"s":{"type":"string"}}}`, ""},
		{"draft-07 definitions", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"$ref":"#/definitions/s"}},"definitions":{"s":{"type":"string"}}}`, ""},
		{"boolean subschemas", `{"type":"object","properties":{"a":true,"b":false},"additionalProperties":false}`, ""},
		{"escaped pointer", `{"type":"object","properties":{"a/b":{"type":"string"},"c":{"$ref":"#/properties/a~1b"}}}`, ""},
		{"depth limit", nested(MaxSchemaDepth - 1), ""},

		{"self", `{"type":"object","$ref":"#"}`, "$ref cycle # → #"},
		{"a b a", `{"type":"object","$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}}}`, "$ref cycle #/$defs/a → #/$defs/b → #/$defs/a"},
		{"allOf", `{"type":"object","allOf":[{"$ref":"#"}]}`, "$ref cycle"},
		{"anyOf", `{"type":"object","anyOf":[{"$ref":"#"}]}`, "$ref cycle"},
		{"oneOf", `{"type":"object","oneOf":[{"$ref":"#"}]}`, "$ref cycle"},
		{"not", `{"type":"object","not":{"$ref":"#"}}`, "$ref cycle"},
		{"if", `{"type":"object","if":{"$ref":"#"}}`, "$ref cycle"},
		{"then", `{"type":"object","if":true,"then":{"$ref":"#"}}`, "$ref cycle"},
		{"else", `{"type":"object","if":false,"else":{"$ref":"#"}}`, "$ref cycle"},
		{"dependentSchemas", `{"type":"object","dependentSchemas":{"a":{"$ref":"#"}}}`, "$ref cycle"},
		{"dependencies", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","dependencies":{"a":{"$ref":"#"}}}`, "$ref cycle"},
		{"anchor cycle", `{"type":"object","$defs":{"a":{"$anchor":"x","allOf":[{"$ref":"#x"}]}},"$ref":"#x"}`, "$ref cycle"},
		{"unreferenced cycle", `{"type":"object","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}}}`, "$ref cycle"},
		{"recursive through properties", `{"type":"object","properties":{"child":{"$ref":"#"}}}`, "recursive schemas are not supported"},
		{"recursive through items", `{"type":"object","properties":{"list":{"type":"array","items":{"$ref":"#"}}}}`, "recursive schemas are not supported"},
		{"dynamicRef", `{"type":"object","$dynamicAnchor":"n","properties":{"c":{"$dynamicRef":"#n"}}}`, "$dynamicRef is not supported"},
		{"nested id", `{"type":"object","properties":{"a":{"$id":"https://example.com/a","type":"string"}}}`, "$id below the root"},
		{"remote ref", `{"type":"object","$ref":"https://example.com/s.json"}`, "refers outside the schema"},
		{"relative remote ref", `{"type":"object","$ref":"other.json#/x"}`, "refers outside the schema"},
		{"dangling ref", `{"type":"object","$ref":"#/$defs/nope"}`, "does not resolve"},
		{"ref to non-schema", `{"type":"object","properties":{"a":{"type":"string"}},"$ref":"#/properties"}`, "does not resolve"},
		{"unknown anchor", `{"type":"object","$ref":"#nope"}`, "does not resolve"},
		{"bad type", `{"type":"object","properties":{"n":{"type":"integr"}}}`, `at /properties/n: type: "integr" is not a JSON Schema type`},
		{"type number", `{"type":"object","properties":{"n":{"type":1}}}`, "type: got the number 1"},
		{"type empty array", `{"type":"object","properties":{"n":{"type":[]}}}`, "empty array"},
		{"type duplicate", `{"type":"object","properties":{"n":{"type":["string","string"]}}}`, "appears twice"},
		{"required string", `{"type":"object","required":"x"}`, `required: got the string "x", want an array`},
		{"required numbers", `{"type":"object","required":[1]}`, "want property names"},
		{"properties array", `{"type":"object","properties":[]}`, "properties: got an array"},
		{"property not a schema", `{"type":"object","properties":{"a":"string"}}`, `at /properties/a: a schema must be an object or a boolean, got the string "string"`},
		{"bad pattern", `{"type":"object","properties":{"p":{"pattern":"a(b"}}}`, "pattern: error parsing regexp"},
		{"bad patternProperties", `{"type":"object","patternProperties":{"a(":{}}}`, "patternProperties: error parsing regexp"},
		{"negative minLength", `{"type":"object","properties":{"s":{"minLength":-1}}}`, "minLength: got the number -1"},
		{"zero multipleOf", `{"type":"object","properties":{"s":{"multipleOf":0}}}`, "multipleOf"},
		{"empty allOf", `{"type":"object","allOf":[]}`, "non-empty array"},
		{"unsupported $schema", `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object"}`, "$schema"},
		{"$vocabulary", `{"$vocabulary":{"x":true},"type":"object"}`, "$vocabulary"},
		{"duplicate anchor", `{"type":"object","$defs":{"a":{"$anchor":"x"},"b":{"$anchor":"x"}}}`, "also defined at"},
		{"too deep", nested(MaxSchemaDepth), "nested more than 64 deep"},
		{"keyword case", `{"type":"object","AnYOf":[{"$ref":"#"}]}`, `"AnYOf": keywords are case-sensitive; did you mean "anyOf"?`},
		{"keyword Unicode fold", "{\"type\":\"object\",\"propertie\u017f\":{\"a\":{\"$ref\":\"#\"}}}", `did you mean "properties"?`},
		{"type case", `{"type":"object","TYPE":"string"}`, `did you mean "type"?`},
		{"exponential", doubling(30), "expands to more than"},
		{"deep through refs", deepRefs(MaxSchemaDepth + 5), "nested more than 64 deep through $ref"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkSchema(json.RawMessage(tc.schema))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("checkSchema: %v, want accepted", err)
			case tc.want != "" && err == nil:
				t.Fatalf("checkSchema accepted %s, want an error with %q", clip(tc.schema, 200), tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("checkSchema: %v, want an error with %q", err, tc.want)
			}
			if err == nil {
				validateSamples(t, tc.schema)
			}
		})
	}
}

// deepRefs returns a schema whose $defs refer each to the next, n long.
func deepRefs(n int) string {
	var defs []string
	for i := range n {
		defs = append(defs, fmt.Sprintf(`"d%d":{"$ref":"#/$defs/d%d"}`, i, i+1))
	}
	defs = append(defs, fmt.Sprintf(`"d%d":{"type":"string"}`, n))
	return `{"type":"object","properties":{"x":{"$ref":"#/$defs/d0"}},"$defs":{` + strings.Join(defs, ",") + `}}`
}

// sampleInstances are the arguments validated against every schema checkSchema accepts.
var sampleInstances = []string{
	`{}`, `{"a":1}`, `{"s":"aaa","n":null}`, `{"x":"y","child":{"child":{"child":{}}}}`,
	`{"list":[{"list":[]},1,"x"],"a/b":"c","c":true}`, `{"a":{"a":{"a":{"a":[[[]]]}}}}`,
}

// validateSamples resolves schema with jsonschema-go and validates the
// sample instances against it, which must not crash or hang.
func validateSamples(t *testing.T, schema string) {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(schema), &s); err != nil {
		t.Fatalf("accepted schema does not unmarshal: %v", err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("accepted schema does not resolve: %v", err)
	}
	for _, in := range sampleInstances {
		var v any
		if err := json.Unmarshal([]byte(in), &v); err != nil {
			t.Fatal(err)
		}
		_ = r.Validate(v)
	}
}

// TestParseFileSkipsUnsafeSchemas: a tool with an unusable input or output
// schema is skipped with an error naming the tool; the others load.
func TestParseFileSkipsUnsafeSchemas(t *testing.T) {
	data := `{"id":"x","tools":[
		{"name":"good","inputSchema":{"type":"object"}},
		{"name":"self","inputSchema":{"type":"object","$ref":"#"}},
		{"name":"out","outputSchema":{"type":"object","not":{"$ref":"#"}}}
	],"implementation":{"methods":{"good":"g","self":"s","out":"o"}}}`
	f, err := ParseFile("x.json", []byte(data), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Tools) != 1 || f.Tools[0].ToolName != "good" {
		t.Fatalf("Tools = %+v, want only good", f.Tools)
	}
	want := map[string]SkipReason{"self": BadSchema, "out": BadOutputSchema}
	if len(f.Skipped) != len(want) {
		t.Fatalf("Skipped = %+v", f.Skipped)
	}
	for _, s := range f.Skipped {
		if want[s.ToolName] != s.Reason || !strings.Contains(s.Detail, "$ref cycle") {
			t.Errorf("Skipped %+v, want %v with a $ref cycle", s, want[s.ToolName])
		}
	}
	checkProblems(t, f.Problems, []Problem{
		{File: "x.json", Tool: "self", Severity: Error, Message: "tool self is not exposed: its inputSchema cannot be used: $ref cycle"},
		{File: "x.json", Tool: "out", Severity: Error, Message: "tool out is not exposed: its outputSchema cannot be used: $ref cycle"},
	})
}

// FuzzCheckSchema: jsonschema-go resolves every schema checkSchema accepts
// and validates instances against it without crashing or hanging.
func FuzzCheckSchema(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","$ref":"#"}`,
		`{"type":"object","$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}}}`,
		`{"type":"object","properties":{"child":{"$ref":"#"}}}`,
		`{"type":"object","anyOf":[{"$ref":"#/$defs/a"}],"$defs":{"a":{"if":{"$ref":"#"}}}}`,
		`{"type":"object","$defs":{"a":{"$anchor":"x","allOf":[{"$ref":"#x"}]}},"$ref":"#x"}`,
		`{"type":"object","$dynamicAnchor":"n","properties":{"c":{"$dynamicRef":"#n"}}}`,
		`{"type":"object","properties":{"a":{"$ref":"#/$defs/s"}},"$defs":{"s":{"type":"string","pattern":"^a"}}}`,
		`{"$id":"https://e.com/s","type":"object","properties":{"a":{"$ref":"https://e.com/s#/$defs/s"}},"$defs":{"s":{}}}`,
		`{"type":"object","dependentSchemas":{"a":{"$ref":"#"}}}`,
		`{"type":"object","contentSchema":{"$ref":"#"}}`,
		doubling(12),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, schema string) {
		if !json.Valid([]byte(schema)) || len(schema) > 1<<14 {
			return
		}
		if checkSchema(json.RawMessage(schema)) == nil {
			validateSamples(t, schema)
		}
	})
}
