package quote

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLine(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"contacts", Name, `"contacts"`},
		{"", Name, `""`},
		{`say "hi"\`, Name, `"say \"hi\"\\"`},
		{"two\nlines\r\n", Name, `"two\nlines\r\n"`},
		{"sep\u2028para\u2029", Name, `"sep\u2028para\u2029"`},
		{"evil\u202egnp.exe", Name, `"evil\u202egnp.exe"`},
		{"nul\x00esc\x1b[2J", Name, `"nul\x00esc\x1b[2J"`},
		{"bad\xffutf8", Name, `"bad\xffutf8"`},
		{"Privacy & Security › Screen", Name, `"Privacy & Security › Screen"`},
		{"it's", Name, `"it's"`},
		{"abcdefghij", 4, `"abcd"… (6 more bytes)`},
		// Cut between characters, never inside one or inside an escape.
		{"ab›cd", 4, `"ab"… (5 more bytes)`},
		{"a\nbc", 2, `"a"… (3 more bytes)`},
	} {
		if got := Line(tt.in, tt.n); got != tt.want {
			t.Errorf("Line(%q, %d) = %s, want %s", tt.in, tt.n, got, tt.want)
		}
	}
}

// Whatever the words, the result is one line of valid UTF-8, bounded, and
// its quotes are the first and the last of the quoted part.
func FuzzLine(f *testing.F) {
	for _, s := range []string{"contacts", "a\nb", "\u2028", "\"\\", "\xff\xfe", strings.Repeat("é", 100)} {
		f.Add(s, 10)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		n = min(max(n, 0), 1000)
		got := Line(s, n)
		if !utf8.ValidString(got) || strings.ContainsAny(got, "\n\r\u2028\u2029\u0085") {
			t.Fatalf("Line(%q) = %q: not one line of UTF-8", s, got)
		}
		if got[0] != '"' {
			t.Fatalf("Line(%q) = %q: not quoted", s, got)
		}
		end := 1 // the closing quote: the first not escaped
		for got[end] != '"' {
			if got[end] == '\\' {
				end++
			}
			end++
		}
		if end-1 > n {
			t.Fatalf("Line(%q, %d) = %q: %d bytes quoted", s, n, got, end-1)
		}
		if after := got[end+1:]; after != "" && !strings.HasPrefix(after, "… (") {
			t.Fatalf("Line(%q, %d) = %q: %q after the quotes", s, n, got, after)
		}
	})
}
