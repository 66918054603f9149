package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/geilt/tairseach-mcp/internal/quote"
)

// MaxWordLen is the longest manifest id, tool name or method taken.
const MaxWordLen = 200

// PlainWord reports whether s can be shown as it is where people and
// models read it (messages, the user's questions, the instructions): at
// most MaxWordLen bytes, without a line break, a control character or a
// format character: one of Unicode's Cf (a bidirectional override hides
// text), or any other that renders as nothing or as something else
// (quote.Hidden: a Hangul filler, a variation selector), or a combining
// mark of a word not in NFC, where "e" and U+0301 would read as the "é"
// of another word. Invalid UTF-8 is repaired wherever it is shown, so it
// does not disqualify.
func PlainWord(s string) bool {
	if len(s) > MaxWordLen {
		return false
	}
	marks := !norm.NFC.IsNormalString(s)
	for _, r := range s {
		if r != utf8.RuneError && (quote.Hidden(r) || marks && unicode.Is(unicode.M, r)) {
			return false
		}
	}
	return true
}

// quoteClip shows a word that is not plain, quoted on one line and cut.
func quoteClip(s string) string { return quote.Line(s, 80) }

// clip cuts s to n bytes, marking the cut with "...".
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// MCPName returns the MCP name of the manifest tool toolName under prefix:
// prefix + toolName with every character outside [A-Za-z0-9_-] replaced by
// '_'. A result longer than MaxNameLen is cut and ends in '_' and 8 hex
// characters of a hash of prefix + toolName, so that it is exactly
// MaxNameLen long and stays unique. renamed reports whether sanitising or
// truncation changed toolName.
func MCPName(prefix, toolName string) (name string, renamed bool) {
	sp := sanitise(prefix)
	name = sp + sanitise(toolName)
	if len(name) > MaxNameLen {
		sum := sha256.Sum256([]byte(prefix + toolName))
		name = name[:MaxNameLen-9] + "_" + hex.EncodeToString(sum[:4])
	}
	return name, name != sp+toolName
}

// sanitise replaces every rune outside [A-Za-z0-9_-] with '_'.
func sanitise(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if validNameRune(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

func validNameRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-'
}

// ValidName reports whether name is a possible MCP name from this package:
// 1 to MaxNameLen characters from [A-Za-z0-9_-].
func ValidName(name string) bool {
	if name == "" || len(name) > MaxNameLen {
		return false
	}
	for _, r := range name {
		if !validNameRune(r) {
			return false
		}
	}
	return true
}
