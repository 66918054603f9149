package socketrpc

import (
	"errors"
	"fmt"
)

// A reply can be megabytes of JSON, and the client only needs the bounds of
// its members: this scanner finds them in one validating pass, without the
// two passes and reflection of encoding/json.

// maxDepth bounds nesting, so hostile input cannot exhaust the stack.
const maxDepth = 10000

var errDepth = errors.New("nesting too deep")

// syntaxError reports invalid JSON at a byte offset.
type syntaxError struct {
	off int
	msg string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("invalid JSON at byte %d: %s", e.off, e.msg) }

// scanMembers calls fn for each member of the JSON object b, with the raw
// key (between its quotes, escapes left as they are) and the raw value. It
// checks that b is exactly one valid JSON object, surrounded by white space
// at most.
func scanMembers(b []byte, fn func(key, value []byte)) error {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return &syntaxError{i, "reply is not a JSON object"}
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		i++
	} else {
		for {
			if i >= len(b) || b[i] != '"' {
				return &syntaxError{i, "expected a member name"}
			}
			kend, err := skipString(b, i)
			if err != nil {
				return err
			}
			key := b[i+1 : kend-1]
			i = skipSpace(b, kend)
			if i >= len(b) || b[i] != ':' {
				return &syntaxError{i, "expected ':'"}
			}
			vstart := skipSpace(b, i+1)
			vend, err := skipValue(b, vstart, 1)
			if err != nil {
				return err
			}
			fn(key, b[vstart:vend])
			i = skipSpace(b, vend)
			if i < len(b) && b[i] == ',' {
				i = skipSpace(b, i+1)
				continue
			}
			if i < len(b) && b[i] == '}' {
				i++
				break
			}
			return &syntaxError{i, "expected ',' or '}'"}
		}
	}
	if i = skipSpace(b, i); i != len(b) {
		return &syntaxError{i, "data after the reply object"}
	}
	return nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the JSON value starting at b[i].
func skipValue(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return i, &syntaxError{i, "unexpected end of input"}
	}
	switch c := b[i]; {
	case c == '"':
		return skipString(b, i)
	case c == '{', c == '[':
		if depth > maxDepth {
			return i, errDepth
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
		return i, &syntaxError{i, fmt.Sprintf("unexpected %q", c)}
	}
}

func skipContainer(b []byte, i, depth int) (int, error) {
	obj := b[i] == '{'
	closing := byte(']')
	if obj {
		closing = '}'
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == closing {
		return i + 1, nil
	}
	for {
		if obj {
			if i >= len(b) || b[i] != '"' {
				return i, &syntaxError{i, "expected a member name"}
			}
			end, err := skipString(b, i)
			if err != nil {
				return end, err
			}
			i = skipSpace(b, end)
			if i >= len(b) || b[i] != ':' {
				return i, &syntaxError{i, "expected ':'"}
			}
			i = skipSpace(b, i+1)
		}
		end, err := skipValue(b, i, depth+1)
		if err != nil {
			return end, err
		}
		i = skipSpace(b, end)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
			continue
		}
		if i < len(b) && b[i] == closing {
			return i + 1, nil
		}
		return i, &syntaxError{i, fmt.Sprintf("expected ',' or %q", closing)}
	}
}

// skipString returns the end of the string starting at b[i] == '"'.
func skipString(b []byte, i int) (int, error) {
	for i++; i < len(b); i++ {
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
					return i, &syntaxError{i, "invalid \\u escape"}
				}
				i += 4
			default:
				return i, &syntaxError{i, "invalid escape"}
			}
		case c < 0x20:
			return i, &syntaxError{i, "control character in string"}
		}
	}
	return i, &syntaxError{i, "unterminated string"}
}

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
		return i, &syntaxError{start, "invalid number"}
	}
	if i < len(b) && b[i] == '.' {
		j := skipDigits(b, i+1)
		if j == i+1 {
			return j, &syntaxError{start, "invalid number"}
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
			return j, &syntaxError{start, "invalid number"}
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
		return i, &syntaxError{i, "invalid literal"}
	}
	return i + len(lit), nil
}
