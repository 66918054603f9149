package manifest

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/geilt/tairseach-mcp/internal/jsonscan"
)

// Position is where something is written in a manifest file: a 1-based
// line and a 1-based column in bytes. The zero Position is unknown.
type Position struct {
	Line, Column int
}

// locator finds where the parts of one manifest are written, so that its
// problems carry a position: ParseFile makes one for the file it parses.
// Keys are matched exactly, the last of equal keys winning, as the file's
// tools are read. It looks for what it is asked, in one validating pass
// over that part (jsonscan), and keeps nothing else but the offset of
// each tool.
type locator struct {
	raw   []byte // the file as read, for lines and columns
	body  []byte // raw without a byte order mark: the JSON
	bom   int    // len(raw) - len(body)
	tools []int  // offset in body of each element of "tools"
}

func newLocator(raw, body []byte) *locator {
	l := &locator{raw: raw, body: body, bom: len(raw) - len(body)}
	if off, ok := l.find(0, "tools"); ok && off < len(body) && body[off] == '[' {
		l.tools = elements(body, off)
	}
	return l
}

// position converts an offset in body.
func (l *locator) position(off int) Position {
	line, col := lineCol(l.raw, int64(off+l.bom))
	return Position{line, col}
}

// value is the position of the value at the end of path, from the root.
func (l *locator) value(path ...string) Position {
	if off, ok := l.find(0, path...); ok {
		return l.position(off)
	}
	return Position{}
}

// key is the position of the key of the member at the end of path.
func (l *locator) key(path ...string) Position {
	parent, ok := l.find(0, path[:len(path)-1]...)
	if !ok {
		return Position{}
	}
	if k, _, ok := member(l.body, parent, path[len(path)-1]); ok {
		return l.position(k)
	}
	return Position{}
}

// tool is the position of field in the i-th tool of the file, or of the
// tool itself when it has no such field; a field may go on into it as a
// path ("inputSchema", "properties", "n").
func (l *locator) tool(i int, field ...string) Position {
	if i < 0 || i >= len(l.tools) {
		return Position{}
	}
	if off, ok := l.find(l.tools[i], field...); ok {
		return l.position(off)
	}
	return l.position(l.tools[i])
}

// find is the offset of the value at path below the value at off: each
// step is a member's key, or an element's index in an array.
func (l *locator) find(off int, path ...string) (int, bool) {
	for _, step := range path {
		if off >= len(l.body) {
			return 0, false
		}
		switch l.body[off] {
		case '{':
			_, v, ok := member(l.body, off, step)
			if !ok {
				return 0, false
			}
			off = v
		case '[':
			i, err := strconv.Atoi(step)
			if err != nil {
				return 0, false
			}
			elems := elements(l.body, off)
			if i < 0 || i >= len(elems) {
				return 0, false
			}
			off = elems[i]
		default:
			return 0, false
		}
	}
	return off, true
}

// member finds the last member named key of the object at b[off]: the
// offsets of its key and of its value.
func member(b []byte, off int, key string) (k, v int, ok bool) {
	end, err := jsonscan.Skip(b, off)
	if err != nil {
		return 0, 0, false
	}
	obj := b[off:end]
	_ = jsonscan.Members(obj, func(name, value []byte) bool {
		if jsonscan.KeyIs(name, key) {
			// Both alias obj: their offsets follow from what is left of it.
			k = off + cap(obj) - cap(name) - 1 // the opening quote
			v = off + cap(obj) - cap(value)
			ok = true
		}
		return true
	})
	return k, v, ok
}

// elements are the offsets of the elements of the array at b[off].
func elements(b []byte, off int) []int {
	var out []int
	i := jsonscan.SkipSpace(b, off+1)
	for i < len(b) && b[i] != ']' {
		end, err := jsonscan.Skip(b, i)
		if err != nil {
			return out
		}
		out = append(out, i)
		i = jsonscan.SkipSpace(b, end)
		if i < len(b) && b[i] == ',' {
			i = jsonscan.SkipSpace(b, i+1)
		}
	}
	return out
}

// lineCol converts a byte index into a 1-based line and byte column.
func lineCol(data []byte, off int64) (line, col int) {
	off = max(0, min(off, int64(len(data))))
	before := data[:off]
	line = 1 + bytes.Count(before, []byte{'\n'})
	col = int(off) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// pointerPath splits a JSON Pointer ("/properties/a~1b") into the steps of
// find ("properties", "a/b").
func pointerPath(ptr string) []string {
	if ptr == "" {
		return nil
	}
	steps := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	for i, s := range steps {
		steps[i] = strings.NewReplacer("~1", "/", "~0", "~").Replace(s)
	}
	return steps
}

// valueStart returns the index where the JSON value whose last byte (or, for
// an object or array, opening delimiter) is at end begins. encoding/json
// reports type errors at the end of scalars.
func valueStart(data []byte, end int64) int64 {
	if end < 0 || end >= int64(len(data)) {
		return end
	}
	switch data[end] {
	case '{', '[':
		return end
	case '"':
		// Walk back to the opening quote: the first quote not escaped by an
		// odd number of backslashes.
		for i := end - 1; i >= 0; i-- {
			if data[i] != '"' {
				continue
			}
			n := 0
			for j := i - 1; j >= 0 && data[j] == '\\'; j-- {
				n++
			}
			if n%2 == 0 {
				return i
			}
		}
		return end
	}
	i := end
	for i > 0 && isScalarByte(data[i-1]) {
		i--
	}
	return i
}

func isScalarByte(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b == '.' || b == '+' || b == '-'
}

// valueOffset returns the index where the value at path starts; path
// elements are object keys (string, matched like encoding/json does,
// ignoring case) or array indexes (int).
func valueOffset(data []byte, path ...any) (int64, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	for _, p := range path {
		tok, err := dec.Token()
		if err != nil {
			return 0, false
		}
		found := false
		switch p := p.(type) {
		case string:
			if tok != json.Delim('{') {
				return 0, false
			}
			for !found && dec.More() {
				k, err := dec.Token()
				if err != nil {
					return 0, false
				}
				if ks, _ := k.(string); strings.EqualFold(ks, p) {
					found = true
				} else if decodeSkip(dec) != nil {
					return 0, false
				}
			}
		case int:
			if tok != json.Delim('[') {
				return 0, false
			}
			for i := 0; !found && dec.More(); i++ {
				if i == p {
					found = true
				} else if decodeSkip(dec) != nil {
					return 0, false
				}
			}
		}
		if !found {
			return 0, false
		}
	}
	// The decoder stops after the previous token; skip separators to the value.
	off := dec.InputOffset()
	for off < int64(len(data)) && strings.IndexByte(" \t\r\n,:", data[off]) >= 0 {
		off++
	}
	return off, true
}

func decodeSkip(dec *json.Decoder) error {
	var v json.RawMessage
	return dec.Decode(&v)
}
