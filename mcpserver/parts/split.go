// Package parts cuts a tool result that is larger than the client's agent
// hands its model into parts the model can use, and holds the parts after
// the first for the session that asked, to be read one at a time.
//
// Every agent cuts or files away a result over its own limit, wherever
// the cut falls: inside a JSON string, or the whole result out of the
// model's reach. A part is instead valid JSON of the same shape as the
// whole, with one list in it (an array's items, an object's members, a
// string's lines) shortened to whole entries. Split decides the parts;
// Store holds them.
package parts

import (
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/geilt/tairseach-mcp/internal/jsonenc"
	"github.com/geilt/tairseach-mcp/internal/jsonscan"
)

// Part is one part of a result.
type Part struct {
	Text []byte // the part, valid JSON when the whole was (Cut is false)
	// Unit, From, To and Of say what of the whole the part holds: entries
	// From to To (1-based, inclusive) of the Of that the list at Path has.
	Unit     string // "items", "members", "lines" or "bytes"
	Path     string // where the list is in the whole, as jq writes it ("." the whole)
	From, To int
	Of       int
	// Cut reports a part that is not valid JSON: a line, or a result
	// nested too deep to split, cut at a character boundary.
	Cut bool
}

// What says what the part holds, for the model: "items 1–120 of 2,000 of
// the array at .contacts".
func (p Part) What() string {
	what := map[string]string{"items": "array", "members": "object", "lines": "string", "bytes": "text"}[p.Unit]
	at := "the whole result"
	if p.Path != "." {
		at = "the " + what + " at " + p.Path
	} else if what != "text" {
		at = "the top-level " + what
	}
	span := Count(p.From) + "–" + Count(p.To)
	if p.From == p.To {
		span = Count(p.From)
	}
	unit := p.Unit
	if p.From == p.To {
		unit = unit[:len(unit)-1]
		if p.Unit == "members" {
			unit = "member"
		}
	}
	return fmt.Sprintf("%s %s of %s of %s", unit, span, Count(p.Of), at)
}

// Count writes n with thousands separators, as the model reads figures.
func Count(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + Count(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// maxDescent is how many levels deep a list is looked for: a part repeats
// the frame around the list, and a hostile result nested thousands deep
// would make every part that frame.
const maxDescent = 32

// Split cuts text, one compact JSON value, into parts of at most budget
// bytes each, in order. Each part is the whole with one list shortened to
// whole entries, found by going down into the member that holds most of an
// object. An entry larger than a part alone is itself split the same way,
// inside the frame around it; a string's line larger than a part is cut at
// a character boundary. Text that is not JSON is cut into lines. A text
// within the budget is one part, itself.
func Split(text []byte, budget int) []Part {
	budget = max(budget, 256)
	s := &splitter{budget: budget}
	if len(text) <= budget {
		return []Part{{Text: text, Unit: "bytes", Path: ".", From: 1, To: len(text), Of: len(text)}}
	}
	if !jsonscan.Valid(text) {
		s.lines(nil, nil, text, ".", false, 0)
		return s.parts
	}
	s.value(nil, nil, text, ".", 0)
	return s.parts
}

type splitter struct {
	budget int
	parts  []Part
}

// value splits v, a JSON value, into parts that are prefix + a piece of v
// + suffix.
func (s *splitter) value(prefix, suffix, v []byte, path string, depth int) {
	room := s.budget - len(prefix) - len(suffix)
	if depth > maxDescent || room < s.budget/2 || room < 64 {
		// The frame alone would fill the parts: send it with the value as
		// text.
		s.bytes(concat(concat(prefix, v), suffix), path)
		return
	}
	switch v[0] {
	case '{':
		if k, start, end, ok := dominant(v, room); ok {
			s.value(concat(prefix, v[:start]), concat(v[end:], suffix), v[start:end], join(path, k), depth+1)
			return
		}
		s.list(prefix, suffix, v, path, depth, '{')
	case '[':
		s.list(prefix, suffix, v, path, depth, '[')
	case '"':
		var str string
		if json.Unmarshal(v, &str) != nil {
			s.bytes(concat(concat(prefix, v), suffix), path)
			return
		}
		s.lines(prefix, suffix, []byte(str), path, true, depth)
	default: // a number, too long for a part
		s.bytes(concat(concat(prefix, v), suffix), path)
	}
}

// dominant finds the member of the object v that holds most of it, if the
// rest of v fits in half of room: the list to split is in it.
func dominant(v []byte, room int) (key string, start, end int, ok bool) {
	best := -1
	jsonscan.Members(v, func(k, val []byte) bool {
		if len(val) > best {
			best = len(val)
			start = int(offset(v, val))
			end = start + len(val)
			key, _ = jsonscan.Key(k)
		}
		return true
	})
	if best < 0 || len(v)-best > room/2 {
		return "", 0, 0, false
	}
	switch v[start] {
	case '{', '[', '"':
		return key, start, end, true
	}
	return "", 0, 0, false
}

// list splits the array or object v into runs of whole entries.
func (s *splitter) list(prefix, suffix, v []byte, path string, depth int, open byte) {
	var entries [][]byte // an object's members are "key":value
	unit, closing := "items", byte(']')
	if open == '{' {
		unit, closing = "members", '}'
		jsonscan.Members(v, func(k, val []byte) bool {
			ks := int(offset(v, k)) - 1 // the opening quote
			entries = append(entries, v[ks:int(offset(v, val))+len(val)])
			return true
		})
	} else {
		entries = elements(v)
	}
	room := s.budget - len(prefix) - len(suffix) - 2
	var run []byte
	first := 0
	flush := func(to int) {
		if to <= first {
			return
		}
		text := make([]byte, 0, len(prefix)+len(run)+len(suffix)+2)
		text = append(append(append(text, prefix...), open), run...)
		text = append(append(text, closing), suffix...)
		s.parts = append(s.parts, Part{Text: text, Unit: unit, Path: path, From: first + 1, To: to, Of: len(entries)})
		run, first = run[:0], to
	}
	for i, e := range entries {
		sep := 0
		if len(run) > 0 {
			sep = 1
		}
		if len(run)+sep+len(e) <= room {
			if sep == 1 {
				run = append(run, ',')
			}
			run = append(run, e...)
			continue
		}
		flush(i)
		if len(e) <= room {
			run = append(run, e...)
			continue
		}
		// An entry larger than a part: split it inside the frame around it.
		inner := e
		elemPath := path + "[" + strconv.Itoa(i) + "]"
		pre := append(append([]byte{}, prefix...), open)
		if open == '{' {
			colon := len(e) - len(memberValue(e))
			pre = append(pre, e[:colon]...)
			inner = e[colon:]
			k, _ := jsonscan.Key(e[1 : colon-2])
			elemPath = join(path, k)
		}
		s.value(pre, concat([]byte{closing}, suffix), inner, elemPath, depth+1)
		first = i + 1
	}
	flush(len(entries))
}

// lines splits text into runs of whole lines; as a JSON string inside the
// frame when quoted, else as it is. A line longer than a part is cut at a
// character boundary.
func (s *splitter) lines(prefix, suffix, text []byte, path string, quoted bool, depth int) {
	var all [][]byte
	for start := 0; start < len(text); {
		end := start
		for end < len(text) && text[end] != '\n' {
			end++
		}
		if end < len(text) {
			end++ // the line keeps its newline
		}
		all = append(all, text[start:end])
		start = end
	}
	size := func(b []byte) int { return len(b) }
	enc := func(dst, b []byte) []byte { return append(dst, b...) }
	frame := 0
	if quoted {
		frame = 2
		size = func(b []byte) int { return len(jsonenc.AppendString(nil, string(b), false)) - 2 }
		enc = func(dst, b []byte) []byte {
			q := jsonenc.AppendString(nil, string(b), false)
			return append(dst, q[1:len(q)-1]...)
		}
	}
	room := s.budget - len(prefix) - len(suffix) - frame
	var run []byte
	first, n := 0, 0
	emit := func(body []byte, p Part) {
		t := make([]byte, 0, len(prefix)+len(body)+len(suffix)+frame)
		t = append(t, prefix...)
		if quoted {
			t = append(t, '"')
		}
		t = append(t, body...)
		if quoted {
			t = append(t, '"')
		}
		p.Text, p.Path, p.Cut = append(t, suffix...), path, !quoted
		s.parts = append(s.parts, p)
	}
	flush := func(to int) {
		if to > first {
			emit(run, Part{Unit: "lines", From: first + 1, To: to, Of: len(all)})
		}
		run, first, n = nil, to, 0
	}
	for i, line := range all {
		l := size(line)
		if n+l <= room {
			run, n = enc(run, line), n+l
			continue
		}
		flush(i)
		if l <= room {
			run, n = enc(run, line), l
			continue
		}
		// A line longer than a part: in pieces that fit, at character
		// boundaries.
		for rest := line; len(rest) > 0; {
			k := fit(rest, room, size)
			emit(enc(nil, rest[:k]), Part{Unit: "lines", From: i + 1, To: i + 1, Of: len(all)})
			rest = rest[k:]
		}
		first = i + 1
	}
	flush(len(all))
}

// fit is the length of the longest start of b, cut at a character
// boundary, whose size is at most room (at least one character).
func fit(b []byte, room int, size func([]byte) int) int {
	// A piece is never smaller than its bytes: no more than room of them
	// are measured, so that a line of megabytes is not measured whole for
	// each of its pieces.
	if len(b) <= room && size(b) <= room {
		return len(b)
	}
	lo, hi := 1, min(len(b), room)
	for lo < hi { // the longest k with size(b[:k]) <= room
		mid := (lo + hi + 1) / 2
		if size(b[:mid]) <= room {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	k := lo
	for k > 0 && k < len(b) && !utf8.RuneStart(b[k]) {
		k--
	}
	if k == 0 {
		_, k = utf8.DecodeRune(b)
	}
	return k
}

// bytes splits v as text, cut at character boundaries: the last resort,
// for a result nested too deep to split into whole entries.
func (s *splitter) bytes(v []byte, path string) {
	size := func(b []byte) int { return len(b) }
	for from := 0; from < len(v); {
		k := fit(v[from:], s.budget, size)
		s.parts = append(s.parts, Part{Text: v[from : from+k], Unit: "bytes", Path: path, From: from + 1, To: from + k, Of: len(v), Cut: true})
		from += k
	}
}

// elements are the items of the JSON array v.
func elements(v []byte) [][]byte {
	var out [][]byte
	i := jsonscan.SkipSpace(v, 1)
	for i < len(v) && v[i] != ']' {
		end, err := jsonscan.Skip(v, i)
		if err != nil {
			return out
		}
		out = append(out, v[i:end])
		i = jsonscan.SkipSpace(v, end)
		if i < len(v) && v[i] == ',' {
			i = jsonscan.SkipSpace(v, i+1)
		}
	}
	return out
}

// memberValue is the value of a compact member "key":value.
func memberValue(m []byte) []byte {
	end, err := jsonscan.Skip(m, 0) // the key
	if err != nil || end >= len(m) {
		return m
	}
	return m[end+1:]
}

// offset is where sub, a slice of b, starts in b.
func offset(b, sub []byte) int {
	if len(sub) == 0 {
		return 0
	}
	return cap(b) - cap(sub)
}

// join is the path of member k of the object at path, as jq writes it.
func join(path, k string) string {
	if path == "." {
		path = ""
	}
	if isIdent(k) {
		return path + "." + k
	}
	q, _ := json.Marshal(k)
	return path + "[" + string(q) + "]"
}

func isIdent(k string) bool {
	if k == "" {
		return false
	}
	for i, c := range k {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func concat(a, b []byte) []byte {
	return append(append(make([]byte, 0, len(a)+len(b)), a...), b...)
}
