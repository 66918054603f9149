// Package jsonscan finds the bounds of JSON values in one validating pass,
// without decoding them.
//
// Backend replies can be megabytes, and the bridge only needs the bounds of
// a few members (the reply's id, result and error; a result's top-level
// properties; a schema's "type"): this package finds them without the two
// passes and reflection of encoding/json, and without allocating. It accepts
// exactly what encoding/json accepts, nesting included (at most MaxDepth
// levels, so hostile input cannot exhaust the stack); the fuzz tests hold it
// to that. Like encoding/json it lets invalid UTF-8 in strings through: the
// bridge repairs it where it writes messages (U+FFFD, as encoding/json does
// when it decodes), rather than lose a whole result to one bad byte.
package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting of arrays and objects accepted, the same
// limit as encoding/json's.
const MaxDepth = 10000

// ErrDepth reports nesting deeper than MaxDepth.
var ErrDepth = errors.New("nesting deeper than 10000 levels")

// SyntaxError reports invalid JSON at a byte offset.
type SyntaxError struct {
	Offset int    // index in the input of the offending byte
	Msg    string // what was expected or found
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at byte %d: %s", e.Offset, e.Msg)
}

// Valid reports whether b is exactly one JSON value, with white space around
// it at most.
func Valid(b []byte) bool {
	end, err := Skip(b, SkipSpace(b, 0))
	return err == nil && SkipSpace(b, end) == len(b)
}

// Members calls fn for each member of the JSON object b, in order, with the
// raw key (between its quotes, escapes left as they are) and the raw value,
// both aliasing b, until fn returns false. It checks that b is exactly one
// valid JSON object with white space around it at most; when fn stops it
// early the rest of b is not checked.
func Members(b []byte, fn func(key, value []byte) bool) error {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		if i >= len(b) {
			return &SyntaxError{i, "expected a JSON object, got nothing"}
		}
		return &SyntaxError{i, "expected a JSON object"}
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		i++
	} else {
		for {
			if i >= len(b) || b[i] != '"' {
				return syntaxError(b, i, "expected a member name")
			}
			kend, err := skipString(b, i)
			if err != nil {
				return err
			}
			key := b[i+1 : kend-1]
			i = SkipSpace(b, kend)
			if i >= len(b) || b[i] != ':' {
				return syntaxError(b, i, "expected ':'")
			}
			vstart := SkipSpace(b, i+1)
			vend, err := skipValue(b, vstart, 2)
			if err != nil {
				return err
			}
			if !fn(key, b[vstart:vend]) {
				return nil
			}
			i = SkipSpace(b, vend)
			if i < len(b) && b[i] == ',' {
				i = SkipSpace(b, i+1)
				continue
			}
			if i < len(b) && b[i] == '}' {
				i++
				break
			}
			return syntaxError(b, i, "expected ',' or '}'")
		}
	}
	if i = SkipSpace(b, i); i != len(b) {
		return &SyntaxError{i, "data after the object"}
	}
	return nil
}

// Skip returns the index just past the JSON value that starts at b[i] (no
// white space before it), checking it on the way.
func Skip(b []byte, i int) (int, error) { return skipValue(b, i, 1) }

// SkipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// Compact returns the valid JSON b without white space between tokens, as
// json.Compact writes it. It returns b itself when there is none, the usual
// case, and a new slice otherwise. b must be valid: Compact does not check.
func Compact(b []byte) []byte {
	var out []byte // nil until the first white space outside strings
	inString, escaped := false, false
	for i, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if out == nil {
				out = append(make([]byte, 0, len(b)), b[:i]...)
			}
			continue
		}
		if out != nil {
			out = append(out, c)
		}
	}
	if out == nil {
		return b
	}
	return out
}

func syntaxError(b []byte, i int, msg string) error {
	if i >= len(b) {
		return &SyntaxError{i, "unexpected end of input"}
	}
	return &SyntaxError{i, msg}
}

// skipValue returns the end of the value starting at b[i], which sits at
// nesting level depth (1 for a top-level value).
func skipValue(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return i, &SyntaxError{i, "unexpected end of input"}
	}
	switch c := b[i]; {
	case c == '"':
		return skipString(b, i)
	case c == '{', c == '[':
		if depth > MaxDepth {
			return i, ErrDepth
		}
		return skipContainer(b, i, depth)
	case c == '-' || (c >= '0' && c <= '9'):
		return skipNumber(b, i)
	case c == 't':
		return skipLiteral(b, i, "true")
	case c == 'f':
		return skipLiteral(b, i, "false")
	case c == 'n':
		return skipLiteral(b, i, "null")
	default:
		return i, &SyntaxError{i, fmt.Sprintf("unexpected %q", c)}
	}
}

func skipContainer(b []byte, i, depth int) (int, error) {
	obj := b[i] == '{'
	closing := byte(']')
	if obj {
		closing = '}'
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == closing {
		return i + 1, nil
	}
	for {
		if obj {
			if i >= len(b) || b[i] != '"' {
				return i, syntaxError(b, i, "expected a member name")
			}
			end, err := skipString(b, i)
			if err != nil {
				return end, err
			}
			i = SkipSpace(b, end)
			if i >= len(b) || b[i] != ':' {
				return i, syntaxError(b, i, "expected ':'")
			}
			i = SkipSpace(b, i+1)
		}
		end, err := skipValue(b, i, depth+1)
		if err != nil {
			return end, err
		}
		i = SkipSpace(b, end)
		if i < len(b) && b[i] == ',' {
			i = SkipSpace(b, i+1)
			continue
		}
		if i < len(b) && b[i] == closing {
			return i + 1, nil
		}
		return i, syntaxError(b, i, fmt.Sprintf("expected ',' or %q", closing))
	}
}

// skipString returns the end of the string starting at b[i] == '"'.
func skipString(b []byte, i int) (int, error) {
	for i++; i < len(b); i++ {
		for i < len(b) && plain[b[i]] {
			i++
		}
		if i >= len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, nil
		case c == '\\':
			i++
			if i >= len(b) {
				break
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) || !isHex(b[i+1]) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) {
					return i, &SyntaxError{i, "invalid \\u escape"}
				}
				i += 4
			default:
				return i, &SyntaxError{i, "invalid escape"}
			}
		case c < 0x20:
			return i, &SyntaxError{i, "control character in string"}
		}
	}
	return i, &SyntaxError{i, "unterminated string"}
}

// plain marks the bytes that stand for themselves in a string: all but
// control characters, '"' and '\\'.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// skipNumber returns the end of the number starting at b[i], following the
// JSON grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func skipNumber(b []byte, i int) (int, error) {
	start := i
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = skipDigits(b, i)
	default:
		return i, &SyntaxError{start, "invalid number"}
	}
	if i < len(b) && b[i] == '.' {
		j := skipDigits(b, i+1)
		if j == i+1 {
			return j, &SyntaxError{start, "invalid number"}
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := skipDigits(b, i)
		if j == i {
			return j, &SyntaxError{start, "invalid number"}
		}
		i = j
	}
	return i, nil
}

func skipDigits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

func skipLiteral(b []byte, i int, lit string) (int, error) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, &SyntaxError{i, "invalid literal"}
	}
	return i + len(lit), nil
}

// Key returns the text of a raw member name as Members reports it (between
// its quotes), unescaping it if it has escapes, and with each byte that is
// not UTF-8 replaced by U+FFFD, as encoding/json decodes it.
func Key(key []byte) (string, error) {
	if bytes.IndexByte(key, '\\') < 0 && utf8.Valid(key) {
		return string(key), nil
	}
	var s string
	q := make([]byte, 0, len(key)+2)
	q = append(append(append(q, '"'), key...), '"')
	err := json.Unmarshal(q, &s)
	return s, err
}

// KeyIs reports whether the raw member name key is name, without allocating
// when key has no escapes.
func KeyIs(key []byte, name string) bool {
	for _, c := range key {
		if c == '\\' || c >= utf8.RuneSelf {
			s, err := Key(key)
			return err == nil && s == name
		}
	}
	return string(key) == name
}

// Kind names the JSON Schema type of the JSON value starting at the first
// byte of b that is not white space ("object", "array", "string",
// "boolean", "null" or "number"), or returns "" when b is only white space.
// It looks at that byte alone: b must be valid JSON for the name to be right.
func Kind(b []byte) string {
	i := SkipSpace(b, 0)
	if i >= len(b) {
		return ""
	}
	switch b[i] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}
