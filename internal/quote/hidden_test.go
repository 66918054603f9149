package quote

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// TestInvisibleCharactersAreEscaped: a character that renders as nothing
// (fillers, variation selectors, format characters) is shown escaped, so
// that "to" and "to\u3164" never show alike.
func TestInvisibleCharactersAreEscaped(t *testing.T) {
	for _, r := range []rune{0x3164, 0x115F, 0x1160, 0xFFA0, 0xFE0F, 0x180B, 0x034F, 0x17B4, 0x200B, 0x200D, 0x2060, 0xFEFF, 0x202E, 0x2066, 0xE0001, 0xFE00, 0xE0100} {
		s := "to" + string(r)
		got := Line(s, Text)
		if got == Line("to", Text) || strings.ContainsRune(got, r) {
			t.Errorf("U+%04X: %s shows as \"to\" or holds the character raw", r, got)
		}
	}
}

// TestCombiningMarksOfATextNotInNFCAreEscaped: "e" + U+0301 would show as
// the "é" of another text.
func TestCombiningMarksOfATextNotInNFCAreEscaped(t *testing.T) {
	if a, b := Line("café", Text), Line("cafe\u0301", Text); a == b || a != `"café"` || b != `"cafe\u0301"` {
		t.Errorf("café precomposed %s, decomposed %s", a, b)
	}
}

// TestIdentLooksAlikeOnlyIfEqual: names in other scripts are escaped, so
// that a Cyrillic "о" does not pass for a Latin "o".
func TestIdentLooksAlikeOnlyIfEqual(t *testing.T) {
	a, _ := Ident("to", Name)
	b, _ := Ident("t\u043e", Name)
	if a == b || a != `"to"` || b != `"t\u043e"` {
		t.Errorf("to %s, tо %s", a, b)
	}
}

// FuzzShownTextIdentifiesIt: two texts shown whole never show alike, and
// nothing shown holds a character Hidden escapes.
func FuzzShownTextIdentifiesIt(f *testing.F) {
	f.Add("to", "to\u3164", false)
	f.Add("café", "cafe\u0301", false)
	f.Add("to", "t\u043e", true)
	f.Add("a\u202eb", "a\u2066b", false)
	f.Fuzz(func(t *testing.T, a, b string, ident bool) {
		show := func(s string) (string, int) {
			if ident {
				return Ident(s, 1<<20)
			}
			return Cut(s, 1<<20)
		}
		sa, _ := show(a)
		sb, _ := show(b)
		if a != b && sa == sb {
			t.Fatalf("%q and %q both show as %s", a, b, sa)
		}
		for _, r := range sa {
			if Hidden(r) || ident && r >= utf8.RuneSelf || unicode.Is(unicode.Zs, r) && r != ' ' {
				t.Fatalf("%q shows as %s, which holds U+%04X", a, sa, r)
			}
		}
	})
}
