package clientconfig

// How the members of a JSON client file are laid out in its text: where a
// member added goes, with what indentation, commas and line breaks,
// and how one taken out leaves the comments and blank lines around it.

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/tailscale/hujson"
)

// indentOf is the indentation of obj's members: that of its last member,
// or one level more than parent's.
func (f *JSONFile) indentOf(obj *hujson.Object, parent string) string {
	if n := len(obj.Members); n > 0 && bytes.Contains(obj.Members[n-1].Name.BeforeExtra, []byte("\n")) {
		return indentAfterLastNewline(obj.Members[n-1].Name.BeforeExtra)
	}
	return parent + f.unit
}

// spansLines reports whether obj's members go on lines of their own.
func (f *JSONFile) spansLines(obj *hujson.Object) bool {
	if !f.multiline || len(obj.Members) == 0 || bytes.Contains(obj.AfterExtra, []byte("\n")) {
		return f.multiline
	}
	for _, m := range obj.Members {
		if bytes.Contains(m.Name.BeforeExtra, []byte("\n")) {
			return true
		}
	}
	return false
}

// render is compact JSON laid out for a member at indent: on lines of
// its own, or on one line.
func (f *JSONFile) render(compact []byte, indent string, multi bool) (hujson.Value, error) {
	var buf bytes.Buffer
	if multi {
		_ = json.Indent(&buf, compact, indent, f.unit)
		if f.newline != "\n" {
			return hujson.Parse(bytes.ReplaceAll(buf.Bytes(), []byte("\n"), []byte(f.newline)))
		}
	} else {
		buf.Write(spaced(compact))
	}
	return hujson.Parse(buf.Bytes())
}

// insert adds the member name: value to obj as its member at, as the file
// lays its members out; obj's own member sits at parent indentation. Last,
// it goes on a line of its own before the closing brace (comments and blank
// lines there stay where they are), with a trailing comma when the file has
// one; before another member, on a line of its own before that member's
// comments.
func (f *JSONFile) insert(obj *hujson.Object, at int, name string, value []byte, parent string) error {
	n := len(obj.Members)
	multi := f.spansLines(obj)
	indent := f.indentOf(obj, parent)
	v, err := f.render(value, indent, multi)
	if err != nil {
		return err
	}
	v.BeforeExtra = hujson.Extra(" ")
	m := hujson.ObjectMember{Name: hujson.Value{Value: hujson.String(name)}, Value: v}
	if at < n {
		m.Name.BeforeExtra = hujson.Extra(f.newline + indent)
		if !multi {
			m.Name.BeforeExtra = separator(obj)
			if at == 0 { // after the brace, as the first member was
				m.Name.BeforeExtra, obj.Members[0].Name.BeforeExtra = obj.Members[0].Name.BeforeExtra, m.Name.BeforeExtra
			}
		}
		obj.Members = slices.Insert(obj.Members, at, m)
		return nil
	}
	tail := obj.AfterExtra
	nl := bytes.LastIndexByte(tail, '\n')
	if nl > 0 && tail[nl-1] == '\r' {
		nl-- // the line break is \r\n
	}
	switch {
	case !multi:
		m.Name.BeforeExtra = separator(obj)
	case nl >= 0:
		m.Name.BeforeExtra = join(tail[:nl], []byte(f.newline+indent))
		obj.AfterExtra = join(tail[nl:])
	case n == 0:
		m.Name.BeforeExtra = join(trimBlank(tail), []byte(f.newline+indent))
		obj.AfterExtra = hujson.Extra(f.newline + parent)
	default: // the closing brace ends the last member's line
		m.Name.BeforeExtra = hujson.Extra(f.newline + indent)
	}
	if n > 0 && obj.Members[n-1].Value.AfterExtra != nil {
		m.Value.AfterExtra = hujson.Extra{} // keep the trailing comma
	}
	obj.Members = append(obj.Members, m)
	return nil
}

// separator is what follows the commas of obj, an object on one line, and
// comes before a member added to it.
func separator(obj *hujson.Object) hujson.Extra {
	n := len(obj.Members)
	switch {
	case n > 1 && isBlank(obj.Members[n-1].Name.BeforeExtra):
		return join(obj.Members[n-1].Name.BeforeExtra) // as after the other commas
	case n > 0 && len(obj.Members[0].Value.BeforeExtra) == 0:
		return hujson.Extra{} // {"a":1}: no spaces
	case n > 0:
		return hujson.Extra(" ")
	}
	return hujson.Extra{}
}

// removeMember takes member k out of obj, undoing insert: the comments
// and blank lines around it stay, and so does a trailing comma.
func removeMember(obj *hujson.Object, k int) {
	m := obj.Members[k]
	kept := dropIndent(m.Name.BeforeExtra)
	n := len(obj.Members)
	switch {
	case k < n-1:
		next := &obj.Members[k+1].Name
		if isBlank(next.BeforeExtra) && !bytes.Contains(next.BeforeExtra, []byte("\n")) {
			next.BeforeExtra = join(m.Name.BeforeExtra) // inline: the next member moves up
		} else {
			next.BeforeExtra = join(kept, next.BeforeExtra)
		}
	case k > 0:
		prev := &obj.Members[k-1].Value
		if m.Value.AfterExtra != nil {
			if prev.AfterExtra == nil {
				prev.AfterExtra = hujson.Extra{}
			}
			obj.AfterExtra = join(kept, obj.AfterExtra)
		} else {
			obj.AfterExtra = join(prev.AfterExtra, kept, obj.AfterExtra)
			prev.AfterExtra = nil
		}
	default:
		obj.AfterExtra = join(kept, obj.AfterExtra)
		if isBlank(obj.AfterExtra) {
			obj.AfterExtra = nil // {}
		}
	}
	obj.Members = append(obj.Members[:k:k], obj.Members[k+1:]...)
}

func memberName(obj *hujson.Object, i int) string {
	if lit, ok := obj.Members[i].Name.Value.(hujson.Literal); ok {
		return lit.String()
	}
	return ""
}

func lastMember(obj *hujson.Object, name string) int {
	for i := len(obj.Members) - 1; i >= 0; i-- {
		if memberName(obj, i) == name {
			return i
		}
	}
	return -1
}

// dedupe takes out all members named name but the last, the one a JSON
// parser keeps.
func dedupe(obj *hujson.Object, name string) {
	for j := lastMember(obj, name) - 1; j >= 0; j-- {
		if memberName(obj, j) == name {
			removeMember(obj, j)
		}
	}
}

// lastOwned is the index of the last member of obj named in fs, or -1.
func lastOwned(obj *hujson.Object, fs []Field) int {
	k := -1
	for _, f := range fs {
		k = max(k, lastMember(obj, f.Key))
	}
	return k
}

// firstOwned is the index of the first member of obj named in fs, or -1.
func firstOwned(obj *hujson.Object, fs []Field) int {
	k := -1
	for _, f := range fs {
		if i := lastMember(obj, f.Key); i >= 0 && (k < 0 || i < k) {
			k = i
		}
	}
	return k
}

// join concatenates into a new slice: the parts may alias the file.
func join(parts ...[]byte) hujson.Extra {
	var out hujson.Extra
	for _, p := range parts {
		out = append(out, p...)
	}
	if out == nil {
		out = hujson.Extra{}
	}
	return out
}

// indentAfterLastNewline is the indentation after the last newline of extra, or "" when
// that line holds more than spaces and tabs.
func indentAfterLastNewline(extra []byte) string {
	i := bytes.LastIndexByte(extra, '\n')
	if i < 0 {
		return ""
	}
	if s := extra[i+1:]; isBlank(s) {
		return string(s)
	}
	return ""
}

// dropIndent removes the newline and indentation that put a member on a
// line of its own, or the spaces before an inline one.
func dropIndent(extra []byte) []byte {
	if i := bytes.LastIndexByte(extra, '\n'); i >= 0 && isBlank(extra[i+1:]) {
		return bytes.TrimSuffix(extra[:i], []byte("\r"))
	}
	return trimBlank(extra)
}

func trimBlank(b []byte) []byte { return bytes.TrimRight(b, " \t\r\n") }

func isBlank(b []byte) bool { return len(bytes.Trim(b, " \t\r\n")) == 0 }

// spaced is compact JSON with a space after each comma and colon, for a
// member on one line.
func spaced(compact []byte) []byte {
	var out []byte
	inString, escaped := false, false
	for _, c := range compact {
		out = append(out, c)
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case !inString && (c == ',' || c == ':'):
			out = append(out, ' ')
		}
	}
	return out
}
