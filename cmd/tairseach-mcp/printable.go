package main

// What the commands print of words they did not write (manifests', backends',
// the command line's), escaped so that they cannot hide or rewrite what the
// user reads.

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/geilt/tairseach-mcp/internal/quote"
)

// printable escapes control characters, invalid UTF-8 and characters
// that render as nothing or as something else (quote.Hidden), which come
// from manifests (tool names, file names), backends and the command line,
// and must not reach a terminal as they are: an escape sequence could
// rewrite what the user reads, a filler make two words look alike.
func printable(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) || r == utf8.RuneError || quote.Hidden(r) }) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unicode.IsControl(r), quote.Hidden(r):
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// printableLines is printable line by line: a message of several lines
// keeps them.
func printableLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = printable(l)
	}
	return strings.Join(lines, "\n")
}
