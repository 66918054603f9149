package check

import (
	"strings"
	"testing"
)

func TestDuplicateKey(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want string // "" for none
	}{
		{`{"a":1,"b":2}`, ""},
		{`{"a":1,"a":2}`, "a"},
		{`{"a":{"b":1,"b":2}}`, "b"},
		{`{"a":[{"x":1},{"y":1,"y":2}]}`, "y"},
		{`{"a\u0062":1,"ab":2}`, "ab"},
		{`{"a":"{\"b\":1,\"b\":2}"}`, ""}, // inside a string
		{`[1,2,{"k":[],"k":{}}]`, "k"},
		{` { } `, ""},
		{`{"a":1,`, ""}, // not JSON: the check refuses it
	} {
		key, dup := duplicateKey([]byte(tt.in))
		if (tt.want != "") != dup || key != tt.want {
			t.Errorf("duplicateKey(%s) = %q, %v; want %q", tt.in, key, dup, tt.want)
		}
	}
	// Many members: the map takes over from the slice.
	var b strings.Builder
	b.WriteString("{")
	for i := range 100 {
		b.WriteString(`"k` + strings.Repeat("x", i) + `":1,`)
	}
	b.WriteString(`"kxxx":2}`)
	if key, dup := duplicateKey([]byte(b.String())); !dup || key != "kxxx" {
		t.Errorf("100 members: %q, %v", key, dup)
	}
}

// Deep nesting costs one pass, not one per level.
func BenchmarkDuplicateKeyDeep(b *testing.B) {
	in := []byte(strings.Repeat("[", 9000) + `"` + strings.Repeat("x", 1<<20) + `"` + strings.Repeat("]", 9000))
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, dup := duplicateKey(in); dup {
			b.Fatal("dup")
		}
	}
}

// Names the backend reads as the same are the same: bytes that are not
// UTF-8 decode to U+FFFD, as encoding/json decodes them; and a client-added
// argument is dropped however its name is spelt.
func TestDuplicateKeyDecodedAsTheBackendDoes(t *testing.T) {
	for _, in := range []string{"{\"\xff\":1,\"\xfe\":2}", "{\"\xff\":1,\"\\ufffd\":2}"} {
		if _, dup := duplicateKey([]byte(in)); !dup {
			t.Errorf("duplicateKey(%q): no duplicate found", in)
		}
	}
	got := dropClientArgs([]byte(`{"a":1,"wait\u005ffor_previous":true}`), func(string) bool { return false })
	if string(got) != `{"a":1}` {
		t.Errorf("an escaped wait_for_previous: %s", got)
	}
}
