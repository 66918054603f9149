package check

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/internal/jsonenc"
	"github.com/geilt/tairseach-mcp/internal/jsonscan"
)

// ValidUTF8 returns the JSON b with each byte that is not UTF-8 replaced by
// U+FFFD, as encoding/json does. In valid JSON such bytes can only be in
// strings, where U+FFFD is as valid.
func ValidUTF8(b []byte) []byte {
	out := make([]byte, 0, len(b)+len(b)/8)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[:size]...)
		}
		b = b[size:]
	}
	return out
}

// maxStructuredDepth is the deepest nesting of structuredContent that the
// go-sdk's decoder accepts (it refuses messages nested over 1000 deep, and
// closes the session): the message and its result are two levels.
const maxStructuredDepth = 1000 - 2

// Undecodable says why a client could not decode the valid JSON b as
// structuredContent, or returns "": nesting deeper than the go-sdk client
// reads, or a number out of range of a double, which Go's encoding/json
// refuses to decode into a value of type any.
func Undecodable(b []byte) string {
	depth := 0
	for i := 0; i < len(b); {
		switch c := b[i]; {
		case c == '"':
			end, err := jsonscan.Skip(b, i)
			if err != nil {
				return err.Error()
			}
			i = end
			continue
		case c == '{' || c == '[':
			if depth++; depth > maxStructuredDepth {
				return fmt.Sprintf("nested more than %d deep", maxStructuredDepth)
			}
		case c == '}' || c == ']':
			depth--
		case c == '-' || c >= '0' && c <= '9':
			j := i + 1
			for j < len(b) && (b[j] >= '0' && b[j] <= '9' || b[j] == '.' || b[j] == 'e' || b[j] == 'E' || b[j] == '+' || b[j] == '-') {
				j++
			}
			// Up to 15 digits without an exponent always fit.
			if j-i > 15 || bytes.ContainsAny(b[i:j], "eE") {
				if _, err := strconv.ParseFloat(string(b[i:j]), 64); err != nil {
					return fmt.Sprintf("the number %s is out of range of a double", Excerpt(b[i:j]))
				}
			}
			i = j
			continue
		}
		i++
	}
	return ""
}

// Lengths of the JSON Encode writes around a text and structured
// content.
const (
	resultFrame      = len(`{"content":[{"type":"text","text":}]}`)
	structuredFrame  = len(`,"structuredContent":`)
	isErrorFrame     = len(`,"isError":true`)
	maxEscapedLength = len(`\u0000`) // the longest a byte of text becomes
)

// Size returns the size of res encoded, as the go-sdk and
// Encode encode it, and whether it is at most limit. It counts only
// when the size could be over the limit.
func Size(res *mcp.CallToolResult, limit int) (int, bool) {
	var t *mcp.TextContent
	ok := false
	if len(res.Content) == 1 {
		t, ok = res.Content[0].(*mcp.TextContent)
	}
	raw, rawOK := res.StructuredContent.(json.RawMessage)
	if !ok || (res.StructuredContent != nil && !rawOK) {
		n := len(marshal(res))
		return n, n <= limit
	}
	n := resultFrame
	if res.IsError {
		n += isErrorFrame
	}
	if raw != nil {
		n += structuredFrame
	}
	if n+maxEscapedLength*(len(t.Text)+len(raw)) <= limit {
		return n + len(t.Text) + len(raw), true // a bound: the usual case
	}
	n += escapedLen(t.Text) + len(raw)
	if raw != nil {
		// structuredContent is written with '<', '>' and '&' escaped (6
		// bytes) and U+2028 and U+2029 (3 bytes as UTF-8, 6 escaped).
		n += 5*(bytes.Count(raw, []byte("<"))+bytes.Count(raw, []byte(">"))+bytes.Count(raw, []byte("&"))) +
			3*(bytes.Count(raw, []byte("\u2028"))+bytes.Count(raw, []byte("\u2029")))
	}
	return n, n <= limit
}

// QuotedLen returns the length of the text b written as a JSON string, as
// the go-sdk writes it: quotes included, '<', '>' and '&' escaped.
func QuotedLen(b []byte) int { return escapedLen(unsafe.String(unsafe.SliceData(b), len(b))) }

// escapedLen returns the length of s encoded as a JSON string with HTML
// escaping, as jsonenc.AppendString and encoding/json write it.
func escapedLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		w, size := runeCost(s[i:])
		n += w
		i += size
	}
	return n
}

// runeCost returns how many bytes the first character of s takes in a
// JSON string with HTML escaping, and how many it takes in s.
func runeCost(s string) (cost, size int) {
	c := s[0]
	if c < utf8.RuneSelf {
		switch {
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
			return 2, 1
		case c < 0x20 || c == '<' || c == '>' || c == '&':
			return 6, 1
		}
		return 1, 1
	}
	r, size := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
		return 6, size
	}
	return size, size
}

// QuotedTail returns where the longest end of the text b starts that,
// written as a JSON string (quotes included), takes at most max bytes.
func QuotedTail(b []byte, max int) int {
	n := 2
	i := len(b)
	for i > 0 {
		start := i - 1
		for start > 0 && i-start < utf8.UTFMax && !utf8.RuneStart(b[start]) {
			start--
		}
		w, size := runeCost(unsafe.String(&b[start], i-start))
		if size != i-start {
			start, w = i-1, 6 // a byte that is not UTF-8 is written as U+FFFD, escaped
		}
		if n+w > max {
			break
		}
		n += w
		i = start
	}
	return i
}

// Excerpt shortens text for an error message.
func Excerpt(b []byte) string {
	const max = 2000
	if len(b) <= max {
		return string(b)
	}
	cut := max
	for cut > max-utf8.UTFMax && !utf8.RuneStart(b[cut]) {
		cut-- // not in the middle of a character
	}
	return string(b[:cut]) + fmt.Sprintf("… (%d bytes in all)", len(b))
}

func ErrorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// Encode marshals a result made by Call exactly as the SDK would,
// copying the structured content (compact already) instead of re-compacting
// it; like the SDK (CallToolResult.MarshalJSON uses json.Marshal) it
// escapes HTML characters in it.
func Encode(res *mcp.CallToolResult) []byte {
	var text string
	if len(res.Content) == 1 {
		if t, ok := res.Content[0].(*mcp.TextContent); ok && t.Meta == nil && t.Annotations == nil {
			text = t.Text
		} else {
			return marshal(res)
		}
	} else {
		return marshal(res)
	}
	raw, _ := res.StructuredContent.(json.RawMessage)
	if res.StructuredContent != nil && raw == nil || res.Meta != nil {
		return marshal(res)
	}
	buf := make([]byte, 0, len(text)+len(raw)+len(text)/8+64)
	buf = append(buf, `{"content":[{"type":"text","text":`...)
	buf = jsonenc.AppendString(buf, text, true) // the SDK's TextContent escapes HTML
	buf = append(buf, "}]"...)
	if raw != nil {
		buf = append(buf, `,"structuredContent":`...)
		buf = appendHTMLEscaped(buf, raw) // as json.Marshal does to a RawMessage
	}
	if res.IsError {
		buf = append(buf, `,"isError":true`...)
	}
	return append(buf, '}')
}

// appendHTMLEscaped appends compact JSON with <, >, &, U+2028 and U+2029
// escaped inside strings, as encoding/json marshals a json.RawMessage.
func appendHTMLEscaped(buf, raw []byte) []byte {
	if !bytes.ContainsAny(raw, "<>&\u2028\u2029") {
		return append(buf, raw...)
	}
	var b bytes.Buffer
	json.HTMLEscape(&b, raw)
	return append(buf, b.Bytes()...)
}

func marshal(res *mcp.CallToolResult) []byte {
	b, err := json.Marshal(res)
	if err != nil {
		return Encode(ErrorResult("encoding the result: " + err.Error()))
	}
	return b
}

// TextResult is a successful result with b as its text.
func TextResult(b []byte) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}
}

// Typed is the result of a 2026-07-28 tools/call returned to the go-sdk
// from outside its own tool handling (the receiving middleware: hidden and
// discovery tools). The go-sdk gives "resultType" only to the results of
// its tool handlers; Typed writes it as they are written: "complete" last,
// or "input_required" before "inputRequests".
type Typed struct{ *mcp.CallToolResult }

// MarshalJSON implements json.Marshaler.
func (r Typed) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(r.CallToolResult)
	if err != nil {
		return nil, err
	}
	if r.InputRequests != nil {
		return MarkInputRequired(b), nil
	}
	b = bytes.Replace(b, []byte(`,"resultType":"complete"`), nil, 1)
	return append(b[:len(b)-1], `,"resultType":"complete"}`...), nil
}

// MarkInputRequired puts "resultType":"input_required" (replacing any
// other resultType) just before "inputRequests" in b, an encoded
// CallToolResult whose content is empty: its first "inputRequests" member
// is the field, as the result's own members come before it and hold no
// text of the client's.
func MarkInputRequired(b []byte) []byte {
	for _, rt := range []string{`,"resultType":"complete"`, `,"resultType":"input_required"`} {
		b = bytes.Replace(b, []byte(rt), nil, 1)
	}
	i := bytes.Index(b, []byte(`,"inputRequests":`))
	if i < 0 {
		return b
	}
	out := make([]byte, 0, len(b)+32)
	out = append(out, b[:i]...)
	out = append(out, `,"resultType":"input_required"`...)
	return append(out, b[i:]...)
}

// ResultText is the text of a result's first block.
func ResultText(res *mcp.CallToolResult) string {
	if res != nil && len(res.Content) > 0 {
		if t, ok := res.Content[0].(*mcp.TextContent); ok {
			return t.Text
		}
	}
	return ""
}
