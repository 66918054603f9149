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
	"strings"

	"github.com/tailscale/hujson"
)

// JSONFile is a client's JSON file as hujson's syntax tree, which keeps
// every comment, comma and space; root is nil for an empty file.
type JSONFile struct {
	mapKey    []string // the server map's path of members: mcpServers, servers, mcp.servers
	name      string   // the entry's: tairseach
	root      *hujson.Value
	multiline bool   // the file spans lines: new members go on lines of their own
	unit      string // one level of indentation, as the file has it
	newline   string // "\r\n" in a file that ends its lines so, else "\n"
}

var hujsonErrRE = regexp.MustCompile(`^hujson: line (\d+), column (\d+): (.*)$`)

// ParseJSON parses a JSON (JSONC) client file for editing the entry name in
// its server map, the member key of the top level, or the member of members
// that key names with dots (mcp.servers). Empty data is a file to make.
func ParseJSON(data []byte, key, name string) (*JSONFile, error) {
	f := &JSONFile{mapKey: strings.Split(key, "."), name: name, unit: "  ", multiline: true, newline: "\n"}
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

// place is where the server map is in the file, or would be.
type place struct {
	obj    *hujson.Object // the server map; nil when a level of its path is missing or null
	in     *hujson.Object // the object that has (or lacks) the level at depth
	at     int            // that level's index in in; -1 when missing
	depth  int            // the level of mapKey at which the search stopped
	indent string         // the indentation of the member whose value in is ("" for the top)
}

// servers finds the server map: the object at its path of members, each the
// last member so named, the one a JSON parser keeps.
func (f *JSONFile) servers() (place, error) {
	p := place{at: -1}
	if f.root == nil {
		return p, nil
	}
	p.in = f.root.Value.(*hujson.Object)
	for ; ; p.depth++ {
		p.at = lastMember(p.in, f.mapKey[p.depth])
		if p.at < 0 {
			return p, nil
		}
		m := p.in.Members[p.at]
		switch v := m.Value.Value.(type) {
		case *hujson.Object:
			if p.depth == len(f.mapKey)-1 {
				p.obj = v
				return p, nil
			}
			p.in, p.indent = v, indentAfterLastNewline(m.Name.BeforeExtra)
			continue
		case hujson.Literal:
			if v.Kind() == 'n' {
				return p, nil
			}
		}
		what := "an object of servers"
		if p.depth < len(f.mapKey)-1 {
			what = "an object"
		}
		path := strings.Join(f.mapKey[:p.depth+1], ".")
		return place{}, fmt.Errorf("%q is %s, not %s; fix it or move the file aside", path, kindName(m.Value.Value.Kind()), what)
	}
}

// Has reports whether the file has the entry.
func (f *JSONFile) Has() (bool, error) {
	p, err := f.servers()
	return p.obj != nil && lastMember(p.obj, f.name) >= 0, err
}

// Set makes the entry have fields, adding it as the last member of the
// server map (and the map when missing) when there is none. An entry there
// keeps every member not in fields, as it was.
func (f *JSONFile) Set(fields []Field) error {
	e := jsonEntry(fields)
	if f.root == nil {
		var buf bytes.Buffer
		_ = json.Indent(&buf, encodeObject([]member{{f.mapKey[0], f.nest(1, e)}}), "", f.unit)
		buf.WriteByte('\n')
		v, err := hujson.Parse(buf.Bytes())
		if err != nil {
			return err
		}
		f.root = &v
		return nil
	}
	p, err := f.servers()
	if err != nil {
		return err
	}
	switch {
	case p.obj == nil && p.at < 0: // a level is missing
		return f.insert(p.in, len(p.in.Members), f.mapKey[p.depth], f.nest(p.depth+1, e), p.indent)
	case p.obj == nil: // "mcpServers": null
		v, err := f.render(f.nest(p.depth+1, e), f.indentOf(p.in, p.indent), f.multiline)
		if err != nil {
			return err
		}
		p.in.Members[p.at].Value.Value = v.Value
		return nil
	}
	obj := p.obj
	parent := indentAfterLastNewline(p.in.Members[p.at].Name.BeforeExtra)
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
	p, err := f.servers()
	obj := p.obj
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

// Member is a member of an entry: its key and its value as JSON.
type Member struct {
	Key   string
	Value json.RawMessage
}

// Take takes the entry out of another server map of the file, at key (a
// path as ParseJSON's), where the client does not read it, and that map
// when this leaves it empty. It returns the entry's members in file order,
// as a JSON parser reads them (the last of the same name), and whether
// there was such an entry; an entry that is not an object has no members.
// Left is how many members that map still has.
func (f *JSONFile) Take(key string) (members []Member, found bool, left int, err error) {
	g := &JSONFile{mapKey: strings.Split(key, "."), name: f.name, root: f.root}
	p, err := g.servers()
	if err != nil || p.obj == nil {
		return nil, false, 0, err
	}
	k := lastMember(p.obj, f.name)
	if k < 0 {
		return nil, false, len(p.obj.Members), nil
	}
	if entry, ok := p.obj.Members[k].Value.Value.(*hujson.Object); ok {
		for j := range entry.Members {
			name := memberName(entry, j)
			if lastMember(entry, name) != j {
				continue
			}
			v := entry.Members[j].Value.Clone()
			v.Standardize()
			members = append(members, Member{name, bytes.TrimSpace(v.Pack())})
		}
	}
	if err := g.Remove(); err != nil {
		return nil, false, 0, err
	}
	if len(p.obj.Members) == 0 {
		removeMember(p.in, p.at)
	}
	return members, true, len(p.obj.Members), nil
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

// nest is a new server map from its level depth down, holding the entry e.
func (f *JSONFile) nest(depth int, e json.RawMessage) json.RawMessage {
	v := encodeObject([]member{{f.name, e}})
	for d := len(f.mapKey) - 1; d >= depth; d-- {
		v = encodeObject([]member{{f.mapKey[d], v}})
	}
	return v
}

// jsonValue is f's value as a new entry has it.
func jsonValue(f Field) json.RawMessage {
	if f.Sub != nil {
		return jsonEntry(f.Sub)
	}
	return marshalEntry(f.Value)
}
