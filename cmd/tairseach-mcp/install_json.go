package main

// The JSON client files (Claude Desktop, Claude Code, Cursor, VS Code,
// Windsurf, Gemini CLI), edited as their owners write them: JSONC, with
// comments and trailing commas, kept byte for byte outside the member that
// install adds and uninstall takes out again.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strconv"

	"github.com/tailscale/hujson"
)

// jsonFile is a client's JSON file as hujson's syntax tree, which keeps
// every comment, comma and space; root is nil for an empty file.
type jsonFile struct {
	key       string // the server map's member: mcpServers, servers
	root      *hujson.Value
	multiline bool   // the file spans lines: new members go on lines of their own
	unit      string // one level of indentation, as the file has it
	newline   string // "\r\n" in a file that ends its lines so, else "\n"
}

// syntaxError is a file that cannot be parsed: where, and why.
type syntaxError struct {
	line, col int
	cause     string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%d:%d: %s", e.line, e.col, e.cause) }

var hujsonErrRE = regexp.MustCompile(`^hujson: line (\d+), column (\d+): (.*)$`)

func parseJSONFile(data []byte, key string) (*jsonFile, error) {
	f := &jsonFile{key: key, unit: "  ", multiline: true, newline: "\n"}
	if len(bytes.TrimSpace(data)) == 0 {
		return f, nil
	}
	v, err := hujson.Parse(data)
	if err != nil {
		se := &syntaxError{line: 1, col: 1, cause: err.Error()}
		if m := hujsonErrRE.FindStringSubmatch(err.Error()); m != nil {
			se.line, _ = strconv.Atoi(m[1])
			se.col, _ = strconv.Atoi(m[2])
			se.cause = m[3]
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			se.cause = "the file ends inside a value (a missing } or ]?)"
		}
		return nil, se
	}
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		return nil, fmt.Errorf("the top level is %s, not an object", kindName(v.Value.Kind()))
	}
	f.root = &v
	f.multiline = bytes.Contains(bytes.TrimSpace(data), []byte("\n"))
	if bytes.Contains(data, []byte("\r\n")) {
		f.newline = "\r\n"
	}
	if len(obj.Members) > 0 {
		if ind := indentAfterLastNewline(obj.Members[0].Name.BeforeExtra); ind != "" {
			f.unit = ind
		}
	}
	return f, nil
}

func kindName(k hujson.Kind) string {
	switch k {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	case '{':
		return "an object"
	}
	return "a number"
}

// servers is the server map: the last member named key, the one a JSON
// parser keeps, its index in the root, and its value when an object.
func (f *jsonFile) servers() (i int, obj *hujson.Object, err error) {
	if f.root == nil {
		return -1, nil, nil
	}
	root := f.root.Value.(*hujson.Object)
	i = lastMember(root, f.key)
	if i < 0 {
		return -1, nil, nil
	}
	switch v := root.Members[i].Value.Value.(type) {
	case *hujson.Object:
		return i, v, nil
	case hujson.Literal:
		if v.Kind() == 'n' {
			return i, nil, nil
		}
	}
	return -1, nil, fmt.Errorf("%q is %s, not an object of servers; fix it or move the file aside", f.key, kindName(root.Members[i].Value.Value.Kind()))
}

// entry reports whether the file has a tairseach entry, and whether it is
// e and the only one.
func (f *jsonFile) entry(e []byte) (found, same bool, err error) {
	_, obj, err := f.servers()
	if err != nil || obj == nil {
		return false, false, err
	}
	k := lastMember(obj, entryName)
	if k < 0 {
		return false, false, nil
	}
	v := obj.Members[k].Value.Clone()
	v.Standardize()
	return true, countMembers(obj, entryName) == 1 && sameJSON(v.Pack(), e), nil
}

// set writes e as the tairseach entry: in place of the one there, or as a
// new last member of the server map, which is added when missing.
func (f *jsonFile) set(e []byte) error {
	if f.root == nil {
		var buf bytes.Buffer
		_ = json.Indent(&buf, encodeObject([]member{{f.key, encodeObject([]member{{entryName, e}})}}), "", f.unit)
		buf.WriteByte('\n')
		v, err := hujson.Parse(buf.Bytes())
		if err != nil {
			return err
		}
		f.root = &v
		return nil
	}
	root := f.root.Value.(*hujson.Object)
	i, obj, err := f.servers()
	if err != nil {
		return err
	}
	rootIndent := f.indentOf(root, "")
	switch {
	case i < 0: // no server map
		return f.insert(root, f.key, encodeObject([]member{{entryName, e}}), "")
	case obj == nil: // "mcpServers": null
		v, err := f.render(encodeObject([]member{{entryName, e}}), rootIndent, f.multiline)
		if err != nil {
			return err
		}
		root.Members[i].Value.Value = v.Value
		return nil
	}
	parent := indentAfterLastNewline(root.Members[i].Name.BeforeExtra)
	k := lastMember(obj, entryName)
	if k < 0 {
		return f.insert(obj, entryName, e, parent)
	}
	v, err := f.render(e, f.indentOf(obj, parent), f.spansLines(obj))
	if err != nil {
		return err
	}
	obj.Members[k].Value.Value = v.Value
	// A JSON object holds one value per name: the earlier ones go.
	for j := k - 1; j >= 0; j-- {
		if memberName(obj, j) == entryName {
			removeMember(obj, j)
		}
	}
	return nil
}

// remove takes every tairseach entry out of the server map.
func (f *jsonFile) remove() error {
	_, obj, err := f.servers()
	if err != nil || obj == nil {
		return err
	}
	for j := len(obj.Members) - 1; j >= 0; j-- {
		if memberName(obj, j) == entryName {
			removeMember(obj, j)
		}
	}
	return nil
}

func (f *jsonFile) bytes() []byte {
	if f.root == nil {
		return nil
	}
	return f.root.Pack()
}

// indentOf is the indentation of obj's members: that of its last member,
// or one level more than parent's.
func (f *jsonFile) indentOf(obj *hujson.Object, parent string) string {
	if n := len(obj.Members); n > 0 && bytes.Contains(obj.Members[n-1].Name.BeforeExtra, []byte("\n")) {
		return indentAfterLastNewline(obj.Members[n-1].Name.BeforeExtra)
	}
	return parent + f.unit
}

// spansLines reports whether obj's members go on lines of their own.
func (f *jsonFile) spansLines(obj *hujson.Object) bool {
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
func (f *jsonFile) render(compact []byte, indent string, multi bool) (hujson.Value, error) {
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

// insert appends the member name: value to obj, whose own member sits at
// parent indentation, as the file lays its members out: on a line of its
// own before the closing brace (comments and blank lines there stay where
// they are), with a trailing comma when the file has one.
func (f *jsonFile) insert(obj *hujson.Object, name string, value []byte, parent string) error {
	n := len(obj.Members)
	multi := f.spansLines(obj)
	indent := f.indentOf(obj, parent)
	v, err := f.render(value, indent, multi)
	if err != nil {
		return err
	}
	v.BeforeExtra = hujson.Extra(" ")
	var before hujson.Extra
	tail := obj.AfterExtra
	nl := bytes.LastIndexByte(tail, '\n')
	if nl > 0 && tail[nl-1] == '\r' {
		nl-- // the line break is \r\n
	}
	switch {
	case !multi && n > 1 && isBlank(obj.Members[n-1].Name.BeforeExtra):
		before = join(obj.Members[n-1].Name.BeforeExtra) // as after the other commas
	case !multi && n > 0:
		before = hujson.Extra(" ")
		if len(obj.Members[0].Value.BeforeExtra) == 0 {
			before = hujson.Extra{} // {"a":1}: no spaces
		}
	case !multi:
		before = hujson.Extra{}
	case nl >= 0:
		before = join(tail[:nl], []byte(f.newline+indent))
		obj.AfterExtra = join(tail[nl:])
	case n == 0:
		before = join(trimBlank(tail), []byte(f.newline+indent))
		obj.AfterExtra = hujson.Extra(f.newline + parent)
	default: // the closing brace ends the last member's line
		before = hujson.Extra(f.newline + indent)
	}
	m := hujson.ObjectMember{Name: hujson.Value{BeforeExtra: before, Value: hujson.String(name)}, Value: v}
	if n > 0 && obj.Members[n-1].Value.AfterExtra != nil {
		m.Value.AfterExtra = hujson.Extra{} // keep the trailing comma
	}
	obj.Members = append(obj.Members, m)
	return nil
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

func countMembers(obj *hujson.Object, name string) int {
	n := 0
	for i := range obj.Members {
		if memberName(obj, i) == name {
			n++
		}
	}
	return n
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

func marshalEntry(e any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(e)
	return bytes.TrimSpace(buf.Bytes())
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// member is one member of a JSON object, kept in file order.
type member struct {
	key   string
	value json.RawMessage
}

// encodeObject is ms as one compact JSON object.
func encodeObject(ms []member) json.RawMessage {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(marshalEntry(m.key))
		buf.WriteByte(':')
		_ = json.Compact(&buf, m.value)
	}
	buf.WriteByte('}')
	return buf.Bytes()
}
