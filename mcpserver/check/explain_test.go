package check

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestArgumentMessages: a refused argument is named in plain words, with
// the rule it breaks and the value given, never in jsonschema-go's terms.
func TestArgumentMessages(t *testing.T) {
	const search = `{"type":"object","required":["query"],"additionalProperties":false,"properties":{
		"query":{"type":"string","minLength":1,"maxLength":8},
		"limit":{"type":"integer","minimum":1,"maximum":100},
		"ratio":{"type":"number","exclusiveMinimum":0},
		"step":{"type":"integer","multipleOf":5},
		"channel":{"type":"string","enum":["email","phone"]},
		"id":{"type":"string","pattern":"^c-[0-9]+$"},
		"tags":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":2,"uniqueItems":true},
		"filter":{"type":"object","required":["field"],"additionalProperties":false,
			"properties":{"field":{"type":"string"},"op":{"const":"eq"}}},
		"to":{"oneOf":[{"type":"string"},{"type":"array","items":{"type":"string"}}]},
		"note":{"type":["string","null"]},
		"at":{"$ref":"#/$defs/time"},
		"odd key":{"type":"boolean"}},
		"$defs":{"time":{"type":"string","pattern":"^[0-9]{2}:[0-9]{2}$"}}}`
	tests := []struct{ args, want string }{
		{`{"query":"a","limit":0}`, `limit must be an integer ≥ 1 and ≤ 100; got 0`},
		{`{"query":"a","limit":101}`, `limit must be an integer ≥ 1 and ≤ 100; got 101`},
		{`{"query":"a","limit":null}`, `limit must be an integer; got null`},
		{`{"query":"a","limit":2.5}`, `limit must be an integer; got 2.5`},
		{`{"query":"a","limit":"5"}`, `limit must be an integer; got "5"`},
		{`{"query":"a","limit":[5]}`, `limit must be an integer; got an array`},
		{`{"query":"a","ratio":0}`, `ratio must be a number > 0; got 0`},
		{`{"query":"a","step":7}`, `step must be a multiple of 5; got 7`},
		{`{}`, `missing required argument "query"`},
		{`{"query":""}`, `query must be from 1 to 8 characters long; got ""`},
		{`{"query":"abcdefghij"}`, `query must be from 1 to 8 characters long; got "abcdefghij" (10 characters)`},
		{`{"query":"a","channel":"fax"}`, `channel must be one of "email", "phone"; got "fax"`},
		{`{"query":"a","id":"x-1"}`, `id must match the pattern "^c-[0-9]+$"; got "x-1"`},
		{`{"query":"a","tags":[]}`, `tags must have from 1 to 2 items; got 0 items`},
		{`{"query":"a","tags":["a",1]}`, `tags[1] must be a string; got 1`},
		{`{"query":"a","tags":["a","a"]}`, `tags must not repeat an item; got "a" twice (items 0 and 1)`},
		{`{"query":"a","colour":"red"}`, `unexpected argument "colour"`},
		{`{"query":"a","f":1,"d":2,"b":3}`, `unexpected arguments "b", "d", "f"`},
		{`{"query":"a","filter":{}}`, `missing required argument "filter.field"`},
		{`{"query":"a","filter":{"field":"x","x":1}}`, `unexpected argument "filter.x"`},
		{`{"query":"a","filter":{"field":"x","op":"ne"}}`, `filter.op must be "eq"; got "ne"`},
		{`{"query":"a","to":5}`, `to must be a string or an array; got 5`},
		{`{"query":"a","to":["x",2]}`, `to[1] must be a string; got 2`},
		{`{"query":"a","note":3}`, `note must be a string or null; got 3`},
		{`{"query":"a","at":"noon"}`, `at must match the pattern "^[0-9]{2}:[0-9]{2}$"; got "noon"`},
		{`{"query":"a","odd key":"yes"}`, `"odd key" must be a boolean; got "yes"`},
	}
	in := NewInput(json.RawMessage(search))
	for _, tt := range tests {
		got, err := in.Check(json.RawMessage(tt.args))
		if err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("Check(%s)\n got: %s\nwant: %s", tt.args, got, tt.want)
		}
	}
	for _, ok := range []string{`{"query":"a"}`, `{"query":"a","to":["x"],"note":null,"at":"10:30","tags":["a","b"],"step":10}`} {
		if got, _ := in.Check(json.RawMessage(ok)); got != "" {
			t.Errorf("Check(%s) = %q, want valid", ok, got)
		}
	}
}

// TestArgumentMessagesStable: several wrong arguments get the same message
// every time, whatever order jsonschema-go visits them in.
func TestArgumentMessagesStable(t *testing.T) {
	in := NewInput(json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"},"c":{"type":"string"}}}`))
	for range 20 {
		if got, _ := in.Check(json.RawMessage(`{"c":1,"b":2,"a":3}`)); got != `a must be a string; got 3` {
			t.Fatalf("Check = %q", got)
		}
	}
}

// TestArgumentMessagesFallBack: where the schema uses a keyword explain does
// not know, the library's message stands, with the argument named.
func TestArgumentMessagesFallBack(t *testing.T) {
	in := NewInput(json.RawMessage(`{"type":"object","properties":{"a":{"not":{"type":"string"}}}}`))
	got, _ := in.Check(json.RawMessage(`{"a":"x"}`))
	if !strings.HasPrefix(got, `argument "a": not:`) {
		t.Errorf("Check = %q, want jsonschema-go's message about a", got)
	}
}

// FuzzExplain: explain never finds a problem in arguments jsonschema-go
// accepts, and for a schema of the keywords manifests use (those the quick
// check knows) it always names the problem of arguments jsonschema-go
// refuses, in its own words.
func FuzzExplain(f *testing.F) {
	schemas := append(quickSchemas,
		`{"type":"object","properties":{"to":{"oneOf":[{"type":"string"},{"type":"array","items":{"type":"string"}}]},"u":{"type":"array","uniqueItems":true},"m":{"type":"integer","multipleOf":3}}}`,
		`{"type":"object","properties":{"r":{"$ref":"#/$defs/r"}},"$defs":{"r":{"type":"object","properties":{"r":{"$ref":"#/$defs/r"}},"additionalProperties":false}}}`,
		`{"type":"object","minProperties":1,"maxProperties":2,"dependentRequired":{"a":["b"]},"allOf":[{"properties":{"a":{"type":"string"}}}]}`)
	for _, s := range schemas {
		for _, args := range []string{`{}`, `{"n":1}`, `{"n":0,"x":2}`, `{"n":null}`, `{"s":"ab"}`, `{"s":"Ab"}`, `{"e":"b"}`, `{"c":"2"}`,
			`{"a":["x",null,1]}`, `{"a":[1,2,3,4]}`, `{"z":1}`, `{"o":{}}`, `{"o":{"p":"1"}}`, `{"to":[1]}`, `{"to":true}`,
			`{"u":[1,1.0]}`, `{"m":4}`, `{"r":{"r":{"x":1}}}`, `{"a":"x","c":1,"d":2}`, `{"a":1}`} {
			f.Add([]byte(s), []byte(args))
		}
	}
	f.Fuzz(func(t *testing.T, schema, args []byte) {
		full, err := compileSchema(schema)
		if err != nil {
			return
		}
		var v any
		if json.Unmarshal(args, &v) != nil || !isObject(v) {
			return
		}
		msg := explain(full.Schema(), v)
		if full.Validate(v) == nil {
			if msg != "" {
				t.Fatalf("jsonschema-go accepts %s against %s, but explain says %q", args, schema, msg)
			}
			return
		}
		if newQuickCheck(schema) != nil && msg == "" {
			t.Fatalf("jsonschema-go refuses %s against %s (%v), and explain cannot say why", args, schema, full.Validate(v))
		}
		if strings.Contains(msg, "reflect") || strings.Contains(msg, "validating") {
			t.Fatalf("explain speaks jsonschema-go: %q", msg)
		}
	})
}

func TestDecodeProblem(t *testing.T) {
	var p struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
		Deep  struct {
			On bool `json:"on"`
		} `json:"deep"`
	}
	for args, want := range map[string]string{
		`{"query":5}`:           "query must be a string; got a number",
		`{"limit":2.5}`:         "limit must be an integer; got 2.5",
		`{"limit":"ten"}`:       "limit must be an integer; got a string",
		`{"deep":{"on":"yes"}}`: "deep.on must be a boolean; got a string",
		`{"query":["a"]}`:       "query must be a string; got an array",
		`[1]`:                   "arguments must be a JSON object; got an array",
	} {
		if got := DecodeProblem(json.Unmarshal([]byte(args), &p)); got != want {
			t.Errorf("DecodeProblem(%s) = %q, want %q", args, got, want)
		}
	}
}
