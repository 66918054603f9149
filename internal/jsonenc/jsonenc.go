// Package jsonenc appends JSON strings exactly as encoding/json writes them,
// without its allocations. The MCP side (results, which the go-sdk writes with
// HTML escaping) and the socket side (requests) share it.
package jsonenc

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// AppendString appends s to b as a JSON string, byte for byte what
// encoding/json writes: invalid UTF-8 becomes U+FFFD, U+2028 and U+2029 are
// escaped, and with html so are '<', '>' and '&' (json.Marshal's default;
// an Encoder with SetEscapeHTML(false) leaves them).
func AppendString(b []byte, s string, html bool) []byte {
	b = append(b, '"')
	set := &safe
	if html {
		set = &htmlSafe
	}
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if set[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			// Valid JSON, but not valid JavaScript; encoding/json escapes them too.
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// safe and htmlSafe mark the ASCII bytes a JSON string holds as they are:
// all but control characters, '"' and '\\', and for htmlSafe '<', '>' and
// '&' (encoding/json's safeSet and htmlSafeSet).
var safe, htmlSafe = func() (s, h [utf8.RuneSelf]bool) {
	for c := byte(0x20); c < utf8.RuneSelf; c++ {
		s[c] = c != '"' && c != '\\'
		h[c] = s[c] && c != '<' && c != '>' && c != '&'
	}
	return s, h
}()

// Marshal is json.Marshal without escaping HTML, as the go-sdk writes a
// message: '<', '>' and '&' stay as they are (a type's own MarshalJSON may
// still escape them).
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
