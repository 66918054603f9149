package jsonenc

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// encodingJSON encodes s as encoding/json does, with or without HTML escaping.
func encodingJSON(t testing.TB, s string, html bool) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(html)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

func TestAppendString(t *testing.T) {
	tests := []string{
		"", "contacts.list", `a"b\c`, "tab\tnl\ncr\r", "\x00\x1f\x7f\b\f", "ünïcødé ☘", "\u2028\u2029",
		"bad\xffutf8", "<html>&", "é ü 日本 \u2028 <>&", "line\nbreak\ttab\r\"quote\\ \b\f\x01\x1f",
	}
	for _, s := range tests {
		for _, html := range []bool{false, true} {
			if got, want := string(AppendString(nil, s, html)), encodingJSON(t, s, html); got != want {
				t.Errorf("AppendString(%q, html=%v) = %s, want %s", s, html, got, want)
			}
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a.b", "\"\\\n", "\xff", "\u2028", "<a&b>"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, html bool) {
		got := AppendString(nil, s, html)
		if want := encodingJSON(t, s, html); string(got) != want {
			t.Fatalf("AppendString(%q, html=%v) = %s, want %s", s, html, got, want)
		}
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatal(err)
		}
		if utf8.ValidString(s) && back != s {
			t.Fatalf("round trip of %q gave %q", s, back)
		}
	})
}
