package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestMembers(t *testing.T) {
	tests := []struct {
		in   string
		ok   bool
		keys string
	}{
		{`{}`, true, ""},
		{` {"a":1 , "b" : [true,false,null,{"c":"\u00e9\n"}], "c":-0.5e+3} `, true, "a,b,c"},
		{`{"a":"x\"y"}`, true, "a"},
		{`{"a":1,"a":2}`, true, "a,a"},
		{`{"a":1}x`, false, ""},
		{`{"a":1,}`, false, ""},
		{`{"a" 1}`, false, ""},
		{`{"a":01}`, false, ""},
		{`{"a":1.}`, false, ""},
		{`{"a":1e}`, false, ""},
		{`{"a":-}`, false, ""},
		{`{"a":tru}`, false, ""},
		{`{"a":"\x"}`, false, ""},
		{`{"a":"\u12"}`, false, ""},
		{"{\"a\":\"\x01\"}", false, ""},
		{`[1]`, false, ""},
		{``, false, ""},
		{`   `, false, ""},
		{`{`, false, ""},
		{`{"a":[1 2]}`, false, ""},
		{`{"a":{"b"}}`, false, ""},
		{`{"a":"unterminated}`, false, ""},
		{`{"a":1}{"b":2}`, false, ""},
		// Invalid UTF-8 in strings passes, as with encoding/json: the bridge
		// repairs it where it writes messages.
		{"{\"a\":\"\xff\"}", true, "a"},
		{"{\"a\":\"\xed\xa0\x80\"}", true, "a"}, // a UTF-16 surrogate, encoded
		{"{\"\xc3\":1}", true, "\xc3"},
		{"{\"a\":1}\xff", false, ""},
		{"{\"é\":\"日本\U0001F600\"}", true, "é"},
	}
	for _, tt := range tests {
		var keys []string
		err := Members([]byte(tt.in), func(k, _ []byte) bool { keys = append(keys, string(k)); return true })
		if (err == nil) != tt.ok {
			t.Errorf("Members(%s) = %v, want ok %v", tt.in, err, tt.ok)
		}
		if tt.ok && strings.Join(keys, ",") != tt.keys {
			t.Errorf("Members(%s) keys %v, want %s", tt.in, keys, tt.keys)
		}
		if json.Valid([]byte(tt.in)) && strings.HasPrefix(strings.TrimSpace(tt.in), "{") != tt.ok {
			t.Errorf("test case %s disagrees with encoding/json", tt.in)
		}
	}
}

func TestMembersStopsEarly(t *testing.T) {
	n := 0
	err := Members([]byte(`{"a":1,"b":2,"c":3}`), func(k, _ []byte) bool { n++; return string(k) != "b" })
	if err != nil || n != 2 {
		t.Fatalf("Members stopped after %d members, err %v; want 2, nil", n, err)
	}
}

// TestDepth checks the nesting limit is encoding/json's: MaxDepth levels
// pass, one more fails with ErrDepth (not a stack overflow).
func TestDepth(t *testing.T) {
	for _, tc := range []struct {
		depth int
		ok    bool
	}{{MaxDepth, true}, {MaxDepth + 1, false}, {1 << 20, false}} {
		b := []byte(strings.Repeat("[", tc.depth) + strings.Repeat("]", tc.depth))
		if got := Valid(b); got != tc.ok || json.Valid(b) != tc.ok {
			t.Errorf("depth %d: Valid %v, json.Valid %v, want %v", tc.depth, got, json.Valid(b), tc.ok)
		}
		if _, err := Skip(b, 0); !tc.ok && !errors.Is(err, ErrDepth) {
			t.Errorf("depth %d: Skip error %v, want ErrDepth", tc.depth, err)
		}
		obj := []byte(`{"a":` + string(b[:len(b)-2]) + `}`) // one level more
		want := tc.depth < MaxDepth
		if err := Members(obj, func(_, _ []byte) bool { return true }); (err == nil) != want || json.Valid(obj) != want {
			t.Errorf("object around depth %d: Members %v, json.Valid %v, want ok %v", tc.depth, err, json.Valid(obj), want)
		}
	}
}

func TestCompact(t *testing.T) {
	for _, in := range []string{`{}`, ` { "a" : [ 1 , 2 ] ,"b":"x y\" \\" } `, "[\n\t1\r\n]", `"  "`, `{"a":"\\"," b":1}`} {
		var want bytes.Buffer
		if err := json.Compact(&want, []byte(in)); err != nil {
			t.Fatal(err)
		}
		if got := Compact([]byte(in)); string(got) != want.String() {
			t.Errorf("Compact(%q) = %q, want %q", in, got, want.String())
		}
	}
	b := []byte(`{"a":[1,2]}`)
	if got := Compact(b); &got[0] != &b[0] {
		t.Error("Compact copied JSON that had no white space")
	}
}

func TestKey(t *testing.T) {
	for _, tc := range []struct {
		raw, want string
		ok        bool
	}{{`type`, "type", true}, {`t\u0079pe`, "type", true}, {`a\"b`, `a"b`, true}, {`bad\x`, "", false}} {
		got, err := Key([]byte(tc.raw))
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("Key(%q) = %q, %v; want %q, ok %v", tc.raw, got, err, tc.want, tc.ok)
		}
		if tc.ok && !KeyIs([]byte(tc.raw), tc.want) {
			t.Errorf("KeyIs(%q, %q) = false", tc.raw, tc.want)
		}
	}
	if KeyIs([]byte(`typo`), "type") {
		t.Error(`KeyIs("typo", "type") = true`)
	}
}

func seeds(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `{"jsonrpc":"2.0","id":1,"result":{"x":[1,2.5e3,"\u00e9"]}}`, `{"a":[}`, ` {"a":"b"} `,
		`{"a":-0}`, `[]`, `{"a":1,"a":2}`, `{"a\"b":{"c":[true,false,null]}}`, `{"a":1E+400}`, "{\"a\":\"\xff\"}", `"x"`, `1`, `{"a" : [ 1 , { "b" : 2 } ] }`} {
		f.Add([]byte(s))
	}
}

// FuzzMembers holds Members to encoding/json: it accepts exactly the valid
// JSON objects, and the members it reports are the object's members.
func FuzzMembers(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		got := map[string]json.RawMessage{}
		err := Members(b, func(k, v []byte) bool {
			if !json.Valid(v) || len(bytes.TrimSpace(v)) != len(v) {
				t.Fatalf("member value %q of %q is not a valid JSON value without space around it", v, b)
			}
			var key string // as encoding/json reads it: invalid UTF-8 becomes U+FFFD
			if kerr := json.Unmarshal(append(append([]byte{'"'}, k...), '"'), &key); kerr != nil {
				t.Fatalf("member name %q of %q: %v", k, b, kerr)
			}
			got[key] = v // the last duplicate wins, as with encoding/json
			return true
		})
		trimmed := bytes.TrimLeft(b, " \t\r\n")
		want := json.Valid(b) && len(trimmed) > 0 && trimmed[0] == '{'
		if (err == nil) != want {
			t.Fatalf("Members(%q) = %v; encoding/json says valid object: %v", b, err, want)
		}
		if !want {
			return
		}
		var ref map[string]json.RawMessage
		if err := json.Unmarshal(b, &ref); err != nil {
			t.Fatal(err)
		}
		if len(ref) != len(got) {
			t.Fatalf("Members(%q) found %d distinct names, encoding/json %d", b, len(got), len(ref))
		}
		for k, v := range ref {
			if !bytes.Equal(Compact(got[k]), Compact(v)) {
				t.Fatalf("Members(%q): member %q is %q, encoding/json says %q", b, k, got[k], v)
			}
		}
	})
}

// FuzzValidCompact holds Valid, Skip and Compact to encoding/json.
func FuzzValidCompact(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		want := json.Valid(b)
		if got := Valid(b); got != want {
			t.Fatalf("Valid(%q) = %v, json.Valid %v", b, got, want)
		}
		if !want {
			return
		}
		start := SkipSpace(b, 0)
		end, err := Skip(b, start)
		if err != nil || SkipSpace(b, end) != len(b) {
			t.Fatalf("Skip(%q, %d) = %d, %v; want the end of the value", b, start, end, err)
		}
		var ref bytes.Buffer
		if err := json.Compact(&ref, b); err != nil {
			t.Fatal(err)
		}
		if got := Compact(b); !bytes.Equal(got, ref.Bytes()) {
			t.Fatalf("Compact(%q) = %q, json.Compact %q", b, got, ref.Bytes())
		}
	})
}

func BenchmarkMembers1MB(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":1,"result":{"data":"` + strings.Repeat("x", 1<<20) + `","items":[1,2,3]}}`)
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		if err := Members(line, func(_, _ []byte) bool { return true }); err != nil {
			b.Fatal(err)
		}
	}
}

func TestKind(t *testing.T) {
	for in, want := range map[string]string{
		` {"a":1}`: "object", "[1]": "array", `"s"`: "string", "true": "boolean", "false": "boolean",
		"null": "null", "-1.5e3": "number", "0": "number", " \n\t": "", "": "",
	} {
		if got := Kind([]byte(in)); got != want {
			t.Errorf("Kind(%q) = %q, want %q", in, got, want)
		}
	}
}
