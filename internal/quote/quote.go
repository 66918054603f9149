// Package quote shows words that come from outside the bridge (a name or
// text the Tairseach app reports, a string of a manifest, an argument the
// model chose) where a person or a model reads them: in the user's
// questions, in refusals, in the instructions of initialize.
//
// Such words are shown quoted, on one line and cut to a length, so that
// they cannot pass for the bridge's own words: a newline, a carriage
// return, a Unicode line separator or a control character is escaped, a
// quote inside is escaped, and what was cut is said after the closing
// quote, where the words themselves cannot write.
//
// What is shown must also identify what is sent: a character that renders
// as nothing or as something else (Unicode's default-ignorable code points:
// format characters, fillers, variation selectors, bidi and joining
// controls) is escaped, and so is a combining mark of a text that is not in
// NFC, where "e" and U+0301 would show as the "é" of another text. Names
// (Ident) are shown with every character outside ASCII escaped, so that
// two different names never look the same (a Cyrillic "о" in "tо").
// Where a message shows a name or a text bare, Word and Bare keep it bare
// while it reads as it is, and quote it as soon as it would not.
package quote

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Defaults for the words the bridge shows most.
const (
	// Name bounds a name: a permission, a method, a tool, a key.
	Name = 64
	// Text bounds a text: a description, a remediation, a reply.
	Text = 300
)

// Line returns s in double quotes on one line, with every character that
// could break the line or hide itself escaped as Go escapes it (\n, \x00,
// \u2028, \u202e); invalid UTF-8 shows as \x escapes. When the quoted text
// would be longer than n bytes, it is cut between characters and followed
// by "… (N more bytes)", N counting the bytes of s left out.
func Line(s string, n int) string {
	line, _ := Cut(s, n)
	return line
}

// Cut is Line, and how many bytes of s it left out.
func Cut(s string, n int) (line string, left int) {
	return cut(s, n, false)
}

// Ident is Cut for a name (an argument's, a member's): every character
// outside ASCII is escaped too, so that names that differ never look the
// same, whatever their script.
func Ident(s string, n int) (line string, left int) {
	return cut(s, n, true)
}

func cut(s string, n int, ascii bool) (line string, left int) {
	var b strings.Builder
	b.WriteByte('"')
	left = appendCut(&b, s, n, ascii)
	b.WriteByte('"')
	if left > 0 {
		b.WriteString(More(left))
	}
	return b.String(), left
}

// IdentLine is Ident without what it left out, as Line is Cut.
func IdentLine(s string, n int) string {
	line, _ := Ident(s, n)
	return line
}

// Word returns s as it is when it is a plain word: 1 to n bytes of
// printable ASCII without a space, a quote, a backslash or a comma, which
// reads the same whatever surrounds it; else s as Ident shows it. It is
// for names a message shows bare (a member of a client's file, a glob),
// which must be shown quoted when they could look like another name or
// run into the words around them.
func Word(s string, n int) string {
	if s == "" || len(s) > n || strings.ContainsFunc(s, func(r rune) bool {
		return r <= ' ' || r >= 0x7f || r == '"' || r == '\\' || r == ','
	}) {
		return IdentLine(s, n)
	}
	return s
}

// Bare returns s as it is when Line would escape none of its characters
// but quotes and backslashes, and cut none of it; else Line(s, n). It is
// for texts a message shows bare (a backend's error message): they keep
// their look, unless they hold a character that could hide, pass for
// another or break the line, or are too long.
func Bare(s string, n int) string {
	if len(s) > n || !utf8.ValidString(s) {
		return Line(s, n)
	}
	marks := !norm.NFC.IsNormalString(s)
	for _, r := range s {
		if r < utf8.RuneSelf && !strconv.IsPrint(r) || r >= utf8.RuneSelf && (Hidden(r) || marks && unicode.Is(unicode.M, r)) {
			return Line(s, n)
		}
	}
	return s
}

// Escape returns s with every character Line would escape, but quotes and
// backslashes, escaped as Line escapes it, and nothing else changed. It is
// for a message that holds outside words unquoted, or quoted by another
// program's %q (the go-sdk's "unknown tool %q"): what could hide shows.
func Escape(s string) string {
	marks := !norm.NFC.IsNormalString(s)
	hidden := func(r rune) bool {
		return r < utf8.RuneSelf && !strconv.IsPrint(r) || r >= utf8.RuneSelf && (Hidden(r) || marks && unicode.Is(unicode.M, r))
	}
	if utf8.ValidString(s) && !strings.ContainsFunc(s, hidden) {
		return s
	}
	var b strings.Builder
	var buf []byte
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		buf = buf[:0]
		switch {
		case r == utf8.RuneError && size == 1:
			buf = append(buf, `\x`...)
			buf = append(buf, hex[s[i]>>4], hex[s[i]&15])
		case r < utf8.RuneSelf && !strconv.IsPrint(r):
			q := strconv.QuoteRune(r) // \n, \t, \x00
			buf = append(buf, q[1:len(q)-1]...)
		case hidden(r):
			buf = appendEscape(buf, r)
		default:
			buf = append(buf, s[i:i+size]...)
		}
		b.Write(buf)
		i += size
	}
	return b.String()
}

// More is the mark of a cut after a quoted value: "… (N more bytes)".
func More(n int) string {
	return "… (" + strconv.Itoa(n) + " more bytes)"
}

// Hidden reports whether r is shown escaped whatever the text: a
// character that is not printable, or one that renders as nothing or as
// something else (Unicode's Default_Ignorable_Code_Point: format
// characters, Other_Default_Ignorable_Code_Point such as the Hangul
// fillers and U+034F, variation selectors; bidi and joining controls).
func Hidden(r rune) bool {
	return !strconv.IsPrint(r) || unicode.In(r, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point,
		unicode.Variation_Selector, unicode.Bidi_Control, unicode.Join_Control, unicode.Noncharacter_Code_Point)
}

// appendCut writes s escaped to b, at most n bytes of it, and returns how
// many bytes of s it left out. With ascii, every character outside ASCII
// is escaped.
func appendCut(b *strings.Builder, s string, n int, ascii bool) int {
	var buf []byte
	written := 0
	// In a text that is not NFC a combining mark may compose, as shown,
	// into what another text holds precomposed: it is escaped.
	marks := !ascii && !norm.NFC.IsNormalString(s)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		buf = buf[:0]
		switch {
		case r == utf8.RuneError && size == 1:
			buf = append(buf, `\x`...)
			buf = append(buf, hex[s[i]>>4], hex[s[i]&15])
		case r == '"' || r == '\\':
			buf = append(buf, '\\', byte(r))
		case r < utf8.RuneSelf && strconv.IsPrint(r):
			buf = append(buf, byte(r))
		case r < utf8.RuneSelf:
			q := strconv.QuoteRune(r) // \n, \t, \x00
			buf = append(buf, q[1:len(q)-1]...)
		case ascii || Hidden(r) || marks && unicode.Is(unicode.M, r):
			buf = appendEscape(buf, r)
		default:
			buf = append(buf, s[i:i+size]...)
		}
		if written+len(buf) > n {
			return len(s) - i
		}
		b.Write(buf)
		written += len(buf)
		i += size
	}
	return 0
}

const hex = "0123456789abcdef"

// appendEscape writes r as Go escapes it: \u2028, \U0001f600.
func appendEscape(buf []byte, r rune) []byte {
	if r > 0xFFFF {
		buf = append(buf, `\U`...)
		for shift := 28; shift >= 0; shift -= 4 {
			buf = append(buf, hex[r>>shift&15])
		}
		return buf
	}
	buf = append(buf, `\u`...)
	for shift := 12; shift >= 0; shift -= 4 {
		buf = append(buf, hex[r>>shift&15])
	}
	return buf
}
