package quote

import (
	"strings"
	"testing"
)

// TestWordAndBare: a name or a text shown bare stays as it is while it
// reads as it is, and is shown quoted, escaped, as soon as it holds a
// character that hides, passes for another or could run into the words
// around it.
func TestWordAndBare(t *testing.T) {
	for _, tt := range []struct {
		in, word, bare string
	}{
		{"disabled", "disabled", "disabled"},
		{"contacts_*", "contacts_*", "contacts_*"},
		{"MY_API_KEY", "MY_API_KEY", "MY_API_KEY"},
		{"", `""`, ""},
		{"a b", `"a b"`, "a b"},
		{"a,b", `"a,b"`, "a,b"},
		{`say "hi"`, `"say \"hi\""`, `say "hi"`},
		{"to\u3164", `"to\u3164"`, `"to\u3164"`},
		{"t\u043e", `"t\u043e"`, "t\u043e"},
		{"caf\u00e9", `"caf\u00e9"`, "caf\u00e9"},
		{"cafe\u0301", `"cafe\u0301"`, `"cafe\u0301"`},
		{"two\nlines", `"two\nlines"`, `"two\nlines"`},
		{"evil\u202egnp", `"evil\u202egnp"`, `"evil\u202egnp"`},
		{"bad\xff", `"bad\xff"`, `"bad\xff"`},
		{"\u26a0\ufe0f", `"\u26a0\ufe0f"`, "\"\u26a0\\ufe0f\""},
	} {
		if got := Word(tt.in, Name); got != tt.word {
			t.Errorf("Word(%q) = %s, want %s", tt.in, got, tt.word)
		}
		if got := Bare(tt.in, Text); got != tt.bare {
			t.Errorf("Bare(%q) = %s, want %s", tt.in, got, tt.bare)
		}
	}
	long := strings.Repeat("x", Name+1)
	if got := Word(long, Name); got != `"`+long[:Name]+`"… (1 more bytes)` {
		t.Errorf("Word of %d bytes = %s", len(long), got)
	}
	if got := Bare(long, Name); got != `"`+long[:Name]+`"… (1 more bytes)` {
		t.Errorf("Bare of %d bytes = %s", len(long), got)
	}
}

// TestEscape: in a message, what could hide is escaped where it is, and
// nothing else changes.
func TestEscape(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`unknown tool "contacts"`, `unknown tool "contacts"`},
		{"unknown tool \"contacts\u3164\"", `unknown tool "contacts\u3164"`},
		{"a\nb\x00", `a\nb\x00`},
		{"bad\xff", `bad\xff`},
		{"caf\u00e9 › done…", "caf\u00e9 › done…"},
		{"cafe\u0301", `cafe\u0301`},
		{"evil\u202egnp", `evil\u202egnp`},
		{`back\slash`, `back\slash`},
		{"\ufffd", "\ufffd"},
	} {
		if got := Escape(tt.in); got != tt.want {
			t.Errorf("Escape(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
