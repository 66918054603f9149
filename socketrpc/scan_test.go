package socketrpc

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestScanMembers(t *testing.T) {
	tests := []struct {
		in   string
		ok   bool
		keys string
	}{
		{`{}`, true, ""},
		{` {"a":1 , "b" : [true,false,null,{"c":"\u00e9\n"}], "c":-0.5e+3} `, true, "a,b,c"},
		{`{"a":"x\"y"}`, true, "a"},
		{`{"a":1}x`, false, ""},
		{`{"a":1,}`, false, ""},
		{`{"a" 1}`, false, ""},
		{`{"a":01}`, false, ""},
		{`{"a":1.}`, false, ""},
		{`{"a":tru}`, false, ""},
		{`{"a":"\x"}`, false, ""},
		{"{\"a\":\"\x01\"}", false, ""},
		{`[1]`, false, ""},
		{`{"a":[1 2]}`, false, ""},
		{`{"a":{"b"}}`, false, ""},
		{`{"a":"unterminated}`, false, ""},
	}
	for _, tt := range tests {
		var keys []string
		err := scanMembers([]byte(tt.in), func(k, _ []byte) { keys = append(keys, string(k)) })
		if (err == nil) != tt.ok {
			t.Errorf("scanMembers(%s) = %v, want ok %v", tt.in, err, tt.ok)
		}
		if tt.ok && strings.Join(keys, ",") != tt.keys {
			t.Errorf("scanMembers(%s) keys %v, want %s", tt.in, keys, tt.keys)
		}
	}
}

// FuzzScanMembers holds the scanner to encoding/json: it accepts exactly the
// valid JSON objects, and the values it reports are valid JSON themselves.
func FuzzScanMembers(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `{"jsonrpc":"2.0","id":1,"result":{"x":[1,2.5e3,"\u00e9"]}}`, `{"a":[}`, ` {"a":"b"} `, `{"a":-0}`, `[]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		err := scanMembers(b, func(_, v []byte) {
			if !json.Valid(v) {
				t.Fatalf("member value %q of %q is not valid JSON", v, b)
			}
		})
		trimmed := bytes.TrimLeft(b, " \t\r\n")
		want := json.Valid(b) && len(trimmed) > 0 && trimmed[0] == '{'
		if (err == nil) != want {
			t.Fatalf("scanMembers(%q) = %v; encoding/json says valid object: %v", b, err, want)
		}
	})
}

func BenchmarkParseReplyLarge(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":1,"result":{"data":"` + string(bytes.Repeat([]byte("x"), 1<<20)) + `","items":[1,2,3]}}`)
	var r wireReply
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if _, err := parseReply(line, &r, 1); err != nil {
			b.Fatal(err)
		}
	}
}
