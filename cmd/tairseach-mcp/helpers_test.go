package main

// Tests of the commands' helpers: building arguments, describing params,
// the edit distance of suggestions, annotation flags, the locator.

// Tests of the inspection commands (tools, validate, call, doctor,
// completion): golden files of their output against manifests.example and
// the real corpus, run in-process through run(), and a few through the real
// binary. `go test -run TestGolden -update` rewrites the golden files.

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/geilt/tairseach-mcp/manifest"
)

func TestBuildArgs(t *testing.T) {
	tests := []struct {
		name    string
		argv    []string
		stdin   string
		want    string
		wantErr string
	}{
		{name: "none", argv: nil, want: `{}`},
		{name: "json object", argv: []string{` {"a": 1, "b": [true]} `}, want: `{"a":1,"b":[true]}`},
		{name: "stdin", argv: []string{"-"}, stdin: "{\"a\":\n 1}\n", want: `{"a":1}`},
		{name: "empty stdin", argv: []string{"-"}, stdin: "", wantErr: "not a JSON object"},
		{name: "stdin array", argv: []string{"-"}, stdin: "[1]", wantErr: "got a JSON array"},
		{name: "number", argv: []string{"n=42"}, want: `{"n":42}`},
		{name: "float", argv: []string{"n=-1.5e3"}, want: `{"n":-1.5e3}`},
		{name: "bools and null", argv: []string{"t=true", "f=false", "z=null"}, want: `{"t":true,"f":false,"z":null}`},
		{name: "object value", argv: []string{`o={"x": [1, 2]}`}, want: `{"o":{"x":[1,2]}}`},
		{name: "string", argv: []string{"s=hello world"}, want: `{"s":"hello world"}`},
		{name: "leading zero is a string", argv: []string{"zip=007"}, want: `{"zip":"007"}`},
		{name: "quoted json string", argv: []string{`q="42"`}, want: `{"q":"42"}`},
		{name: "empty value", argv: []string{"e="}, want: `{"e":""}`},
		{name: "equals in value", argv: []string{"expr=a=b"}, want: `{"expr":"a=b"}`},
		{name: "key needs escaping", argv: []string{`we"ird=1`}, want: `{"we\"ird":1}`},
		{name: "order kept", argv: []string{"b=1", "a=2"}, want: `{"b":1,"a":2}`},
		{name: "not key=value", argv: []string{"hello"}, wantErr: `argument "hello" is not key=value`},
		{name: "empty key", argv: []string{"=1"}, wantErr: "is not key=value"},
		{name: "repeated key", argv: []string{"a=1", "a=2"}, wantErr: `argument "a" given twice`},
		{name: "broken json", argv: []string{`{"a":`}, wantErr: "not a JSON object"},
		{name: "json and pairs", argv: []string{`{"a":1}`, "b=2"}, wantErr: "is not key=value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := buildArgs(tt.argv, strings.NewReader(tt.stdin), nil)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %s, %v; want %s", got, err, tt.want)
			}
		})
	}
}

func TestDescribeParams(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","required":["q"],"additionalProperties":false,
		"properties":{"q":{"type":"string","minLength":1},"n":{"type":"integer"},
		"o":{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"}}}}}}`)
	if got := describeParams(schema); got != "; it takes q (string, required), n (integer), o (object)" {
		t.Errorf("describeParams = %q", got)
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"", "ab", 2}, {"kitten", "sitting", 3},
		{"contacts_serch", "contacts_search", 1}, {"same", "same", 0},
	}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestHintFlags(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		a    manifest.Annotations
		want string
	}{
		{manifest.Annotations{}, "-"},
		{manifest.Annotations{ReadOnlyHint: &yes, OpenWorldHint: &no}, "ro !open"},
		{manifest.Annotations{ReadOnlyHint: &yes, IdempotentHint: &yes, DestructiveHint: &yes, OpenWorldHint: &yes}, "ro idem destr open"},
		{manifest.Annotations{DestructiveHint: &no, Title: "x"}, "!destr"},
	}
	for _, tt := range tests {
		if got := hintFlags(tt.a); got != tt.want {
			t.Errorf("hintFlags(%+v) = %q, want %q", tt.a, got, tt.want)
		}
	}
}
