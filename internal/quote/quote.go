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
package quote

import (
	"strconv"
	"strings"
	"unicode/utf8"
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
	var b strings.Builder
	b.WriteByte('"')
	left = appendCut(&b, s, n)
	b.WriteByte('"')
	if left > 0 {
		b.WriteString(More(left))
	}
	return b.String(), left
}

// More is the mark of a cut after a quoted value: "… (N more bytes)".
func More(n int) string {
	return "… (" + strconv.Itoa(n) + " more bytes)"
}

// appendCut writes s escaped to b, at most n bytes of it, and returns how
// many bytes of s it left out.
func appendCut(b *strings.Builder, s string, n int) int {
	var buf []byte
	written := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		buf = buf[:0]
		switch {
		case r == utf8.RuneError && size == 1:
			buf = append(buf, `\x`...)
			buf = append(buf, "0123456789abcdef"[s[i]>>4], "0123456789abcdef"[s[i]&15])
		case r == '"' || r == '\\':
			buf = append(buf, '\\', byte(r))
		case r < utf8.RuneSelf && strconv.IsPrint(r):
			buf = append(buf, byte(r))
		default:
			// QuoteRune escapes what is not printable (controls, line and
			// paragraph separators, bidi overrides) and keeps the rest.
			q := strconv.QuoteRune(r)
			buf = append(buf, q[1:len(q)-1]...)
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
