package clientconfig

// The JSON client files (Claude Desktop, Claude Code, Cursor, VS Code,
// Windsurf, Gemini CLI), edited as their owners write them: JSONC, with
// comments and trailing commas, kept byte for byte outside the owned members
// of the entry, which Set sets, adds or takes out, and the entry that Remove
// takes out. The layout of what is added is in jsonlayout.go.

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

// JSONFile is a client's JSON file as hujson's syntax tree, which keeps
// every comment, comma and space; root is nil for an empty file.
type JSONFile struct {
	mapKey    string // the server map's member: mcpServers, servers
	name      string // the entry's: tairseach
	root      *hujson.Value
	multiline bool   // the file spans lines: new members go on lines of their own
	unit      string // one level of indentation, as the file has it
	newline   string // "\r\n" in a file that ends its lines so, else "\n"
}

var hujsonErrRE = regexp.MustCompile(`^hujson: line (\d+), column (\d+): (.*)$`)

// ParseJSON parses a JSON (JSONC) client file for editing the entry name in
// its server map, the top-level member key. Empty data is a file to make.
func ParseJSON(data []byte, key, name string) (*JSONFile, error) {
	f := &JSONFile{mapKey: key, name: name, unit: "  ", multiline: true, newline: "\n"}
	if len(bytes.TrimSpace(data)) == 0 {
		return f, nil
	}
	v, err := hujson.Parse(data)
	if err != nil {
		se := &SyntaxError{Line: 1, Col: 1, Cause: err.Error()}
		if m := hujsonErrRE.FindStringSubmatch(err.Error()); m != nil {
			se.Line, _ = strconv.Atoi(m[1])
			se.Col, _ = strconv.Atoi(m[2])
			se.Cause = m[3]
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			se.Cause = "the file ends inside a value (a missing } or ]?)"
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
func (f *JSONFile) servers() (i int, obj *hujson.Object, err error) {
	if f.root == nil {
		return -1, nil, nil
	}
	root := f.root.Value.(*hujson.Object)
	i = lastMember(root, f.mapKey)
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
	return -1, nil, fmt.Errorf("%q is %s, not an object of servers; fix it or move the file aside", f.mapKey, kindName(root.Members[i].Value.Value.Kind()))
}

// Has reports whether the file has the entry.
func (f *JSONFile) Has() (bool, error) {
	_, obj, err := f.servers()
	return obj != nil && lastMember(obj, f.name) >= 0, err
}

// Set makes the entry have fields, adding it as the last member of the
// server map (and the map when missing) when there is none. An entry there
// keeps every member not in fields, as it was.
func (f *JSONFile) Set(fields []Field) error {
	e := jsonEntry(fields)
	if f.root == nil {
		var buf bytes.Buffer
		_ = json.Indent(&buf, encodeObject([]member{{f.mapKey, encodeObject([]member{{f.name, e}})}}), "", f.unit)
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
		return f.insert(root, len(root.Members), f.mapKey, encodeObject([]member{{f.name, e}}), "")
	case obj == nil: // "mcpServers": null
		v, err := f.render(encodeObject([]member{{f.name, e}}), rootIndent, f.multiline)
		if err != nil {
			return err
		}
		root.Members[i].Value.Value = v.Value
		return nil
	}
	parent := indentAfterLastNewline(root.Members[i].Name.BeforeExtra)
	dedupe(obj, f.name)
	k := lastMember(obj, f.name)
	if k < 0 {
		return f.insert(obj, len(obj.Members), f.name, e, parent)
	}
	indent := f.indentOf(obj, parent)
	if entry, ok := obj.Members[k].Value.Value.(*hujson.Object); ok {
		return f.merge(entry, fields, indent)
	}
	v, err := f.render(e, indent, f.spansLines(obj))
	if err != nil {
		return err
	}
	obj.Members[k].Value.Value = v.Value
	return nil
}

// merge makes obj, an entry or its headers, whose own member is at indent
// parent, have fields, and leaves its other members as they are. A member
// added goes after the owned one before it in fields, or before the first
// owned one kept, or where the first one taken out was, or last.
func (f *JSONFile) merge(obj *hujson.Object, fields []Field, parent string) error {
	gone := -1 // where the first owned member taken out was
	taken := func(k int) {
		removeMember(obj, k)
		if gone < 0 || k < gone {
			gone = k
		}
	}
	for _, fd := range fields {
		dedupe(obj, fd.Key)
		k := lastMember(obj, fd.Key)
		if k < 0 {
			continue
		}
		m := &obj.Members[k]
		switch sub, isObject := m.Value.Value.(*hujson.Object); {
		case fd.Absent():
			taken(k)
		case fd.Sub != nil && isObject:
			n := len(sub.Members)
			if err := f.merge(sub, fd.Sub, indentAfterLastNewline(m.Name.BeforeExtra)); err != nil {
				return err
			}
			if len(sub.Members) == 0 && n > 0 {
				taken(k)
			}
		case fd.Sub != nil && len(present(fd.Sub)) == 0:
			taken(k)
		default:
			old := m.Value.Clone()
			old.Standardize()
			if sameJSON(old.Pack(), jsonValue(fd)) {
				continue
			}
			indent := indentAfterLastNewline(m.Name.BeforeExtra)
			if indent == "" {
				indent = f.indentOf(obj, parent)
			}
			// A value keeps its layout, on one line or on lines of its own;
			// an empty [] or {} has none, and takes the entry's.
			packed := hujson.Value{Value: m.Value.Value}.Pack()
			multi := bytes.Contains(packed, []byte("\n"))
			if empty := string(bytes.Join(bytes.Fields(packed), nil)); empty == "[]" || empty == "{}" {
				multi = f.spansLines(obj)
			}
			v, err := f.render(jsonValue(fd), indent, multi)
			if err != nil {
				return err
			}
			m.Value.Value = v.Value
		}
	}
	for j, fd := range fields {
		if lastMember(obj, fd.Key) >= 0 || len(present([]Field{fd})) == 0 {
			continue
		}
		at := len(obj.Members)
		if k := lastOwned(obj, fields[:j]); k >= 0 {
			at = k + 1
		} else if k := firstOwned(obj, fields[j+1:]); k >= 0 {
			at = k
		} else if gone >= 0 {
			at = min(gone, at)
		}
		if err := f.insert(obj, at, fd.Key, jsonValue(fd), parent); err != nil {
			return err
		}
	}
	return nil
}

// Remove takes every member named as the entry out of the server map.
func (f *JSONFile) Remove() error {
	_, obj, err := f.servers()
	if err != nil || obj == nil {
		return err
	}
	for j := len(obj.Members) - 1; j >= 0; j-- {
		if memberName(obj, j) == f.name {
			removeMember(obj, j)
		}
	}
	return nil
}

// Bytes is the file as edited; nil for an empty file left so.
func (f *JSONFile) Bytes() []byte {
	if f.root == nil {
		return nil
	}
	return f.root.Pack()
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

// jsonEntry is a new entry of fields, as compact JSON.
func jsonEntry(fields []Field) json.RawMessage {
	var ms []member
	for _, f := range present(fields) {
		ms = append(ms, member{f.Key, jsonValue(f)})
	}
	return encodeObject(ms)
}

// jsonValue is f's value as a new entry has it.
func jsonValue(f Field) json.RawMessage {
	if f.Sub != nil {
		return jsonEntry(f.Sub)
	}
	return marshalEntry(f.Value)
}
