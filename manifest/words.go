package manifest

import (
	"unicode"
	"unicode/utf8"

	"github.com/geilt/tairseach-mcp/internal/quote"
)

// MaxWordLen is the longest manifest id, tool name or method taken.
const MaxWordLen = 200

// PlainWord reports whether s can be shown as it is where people and
// models read it (messages, the user's questions, the instructions): at
// most MaxWordLen bytes, without a line break, a control character or a
// format character (a bidirectional override hides text). Invalid UTF-8
// is repaired wherever it is shown, so it does not disqualify.
func PlainWord(s string) bool {
	if len(s) > MaxWordLen {
		return false
	}
	for _, r := range s {
		if r != utf8.RuneError && (unicode.IsControl(r) || unicode.In(r, unicode.Zl, unicode.Zp, unicode.Cf)) {
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
