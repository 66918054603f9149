package clientconfig

// Codex's config.toml. No Go TOML library writes a file back with its
// comments and layout, so the [mcp_servers.tairseach] table is edited as
// text: the lines of its owned keys are found with go-toml's
// parser, and changed, added or cut out; every other line stays. The result
// is decoded again and compared with the file before: the rest must decode
// to the same values, the entry to the one meant, or the file is left
// alone.

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// TOMLFile is a TOML client file and its decoded values.
type TOMLFile struct {
	mapKey string // the server tables' prefix: mcp_servers
	name   string // the entry's: tairseach
	data   []byte
	doc    map[string]any
}

// ParseTOML parses a TOML client file for editing the entry name, the
// table [key.name].
func ParseTOML(data []byte, key, name string) (*TOMLFile, error) {
	doc, err := decodeTOML(data)
	if err != nil {
		return nil, err
	}
	return &TOMLFile{mapKey: key, name: name, data: data, doc: doc}, nil
}

func decodeTOML(data []byte) (map[string]any, error) {
	doc := map[string]any{}
	if err := toml.Unmarshal(data, &doc); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			line, col := de.Position()
			return nil, &SyntaxError{Line: line, Col: col, Cause: strings.TrimPrefix(de.Error(), "toml: ")}
		}
		return nil, err
	}
	return doc, nil
}

// tomlEntry is a new entry of fields: its table, as Set writes it.
func tomlEntry(key, name string, fields []Field) []byte {
	nl := []byte("\n")
	return slices.Concat([]byte(tomlHeader(key, name)), nl, tomlLines(fields, Merge(nil, fields), nl))
}

// tomlHeader is the header of the entry's table.
func tomlHeader(key, name string) string { return "[" + key + "." + name + "]" }

// tomlLines are the lines of the members of fields that entry has, with its
// values.
func tomlLines(fields []Field, entry map[string]any, nl []byte) []byte {
	var b []byte
	for _, f := range fields {
		if v, ok := entry[f.Key]; ok {
			b = slices.Concat(b, []byte(tomlKey(f.Key)+" = "+tomlValue(v)), nl)
		}
	}
	return b
}

// tomlValue is v, a decoded value, written as TOML: tables inline.
func tomlValue(v any) string {
	switch v := v.(type) {
	case string:
		return tomlString(v)
	case []any:
		items := make([]string, len(v))
		for i, x := range v {
			items[i] = tomlValue(x)
		}
		return "[" + strings.Join(items, ", ") + "]"
	case map[string]any:
		items := make([]string, 0, len(v))
		for _, k := range slices.Sorted(maps.Keys(v)) {
			items = append(items, tomlKey(k)+" = "+tomlValue(v[k]))
		}
		return "{ " + strings.Join(items, ", ") + " }"
	}
	b, _ := toml.Marshal(map[string]any{"v": v}) // numbers, booleans, dates
	return strings.TrimSpace(strings.TrimPrefix(string(b), "v = "))
}

// tomlKey is k as a TOML key: bare when it can be.
func tomlKey(k string) string {
	if k == "" || strings.ContainsFunc(k, func(r rune) bool {
		return !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_')
	}) {
		return tomlString(k)
	}
	return k
}

// tomlString is s as a TOML basic string.
func tomlString(s string) string {
	s = strings.ToValidUTF8(s, string(utf8.RuneError))
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// servers is the decoded server map, nil when there is none.
func (f *TOMLFile) servers() map[string]any {
	m, _ := f.doc[f.mapKey].(map[string]any)
	return m
}

// Has reports whether the file has the entry.
func (f *TOMLFile) Has() (bool, error) {
	_, found := f.servers()[f.name]
	return found, nil
}

// tomlTable is the [mcp_servers.tairseach] table or one of its subtables.
type tomlTable struct {
	sub  string // "" for the table; env for [mcp_servers.tairseach.env] and the tables under it
	span [2]int // from the header's line to the end of the last key's line
	keys []tomlKeyValue
}

// tomlKeyValue is a key and its value, on lines of their own.
type tomlKeyValue struct {
	key    string // the first part of the key: env, of env.X = "y"
	dotted bool
	line   [2]int // from the start of its first line to the end of its last
	value  [2]int // the value's bytes
}

// tables are the entry's tables, in file order.
func (f *TOMLFile) tables() ([]tomlTable, error) {
	var p unstable.Parser
	p.Reset(f.data)
	var out []tomlTable
	cur := -1
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			cur = -1
			keys, start, end := keyParts(e.Key())
			if e.Kind == unstable.Table && len(keys) >= 2 && keys[0] == f.mapKey && keys[1] == f.name {
				t := tomlTable{span: [2]int{lineStart(f.data, start), lineEnd(f.data, end)}}
				if len(keys) > 2 {
					t.sub = keys[2]
				}
				out = append(out, t)
				cur = len(out) - 1
			}
		case unstable.KeyValue:
			if cur < 0 {
				continue
			}
			keys, start, end := keyParts(e.Key())
			valueEnd := int(e.Raw.Offset + e.Raw.Length)
			kv := tomlKeyValue{
				key: keys[0], dotted: len(keys) > 1,
				line:  [2]int{lineStart(f.data, start), lineEnd(f.data, valueEnd)},
				value: [2]int{valueStart(f.data, end), valueEnd},
			}
			out[cur].keys = append(out[cur].keys, kv)
			out[cur].span[1] = kv.line[1]
		}
	}
	return out, p.Error()
}

// keyParts are a key's parts, decoded, and where its text starts and ends.
func keyParts(it unstable.Iterator) (keys []string, start, end int) {
	start = -1
	for it.Next() {
		k := it.Node()
		keys = append(keys, string(k.Data))
		if start < 0 {
			start = int(k.Raw.Offset)
		}
		end = int(k.Raw.Offset + k.Raw.Length)
	}
	return keys, start, end
}

// valueStart is where the value begins after a key ending at off: past
// the equals sign and the blanks around it.
func valueStart(data []byte, off int) int {
	skip := func() {
		for off < len(data) && (data[off] == ' ' || data[off] == '\t') {
			off++
		}
	}
	skip()
	if off < len(data) && data[off] == '=' {
		off++
	}
	skip()
	return off
}

func lineStart(data []byte, off int) int { return bytes.LastIndexByte(data[:off], '\n') + 1 }

func lineEnd(data []byte, off int) int {
	if i := bytes.IndexByte(data[off:], '\n'); i >= 0 {
		return off + i + 1
	}
	return len(data)
}

// Set makes the entry have fields. In its [mcp_servers.tairseach] table
// only the lines of owned keys change; a subtable of one of them
// (say [mcp_servers.tairseach.http_headers]) is cut, and the key written in
// the table. Without a table, the entry's table goes before its first
// subtable, or at the end of the file after a blank line.
func (f *TOMLFile) Set(fields []Field) error {
	have, found := f.servers()[f.name]
	old, _ := have.(map[string]any)
	want := Merge(old, fields)
	if found && reflect.DeepEqual(have, want) {
		return nil
	}
	tables, err := f.tables()
	if err != nil {
		return err
	}
	nl := []byte("\n")
	if bytes.Contains(f.data, []byte("\r\n")) {
		nl = []byte("\r\n")
	}
	block := bytes.ReplaceAll(tomlEntry(f.mapKey, f.name, fields), []byte("\n"), nl)
	var out []byte
	switch {
	case len(tables) > 0:
		out = applyEdits(f.data, f.edits(tables, fields, old, want, nl))
		if !bytes.HasSuffix(f.data, []byte("\n")) {
			out = bytes.TrimSuffix(out, nl) // the file had no line break at its end, and keeps none
		}
	case len(f.data) == 0:
		out = block
	case !bytes.HasSuffix(f.data, []byte("\n")):
		// No line break at the end: the file keeps none, and remove
		// takes out all that was added.
		out = slices.Concat(f.data, nl, nl, bytes.TrimSuffix(block, nl))
	default:
		out = slices.Concat(f.data, nl, block)
	}
	if err := f.check(out, want); err != nil {
		return fmt.Errorf("cannot add the [%s.%s] table safely (%v); add it by hand:\n\n%s", f.mapKey, f.name, err, block)
	}
	f.data = out
	return nil
}

// tomlEdit replaces the bytes from start to end with text.
type tomlEdit struct {
	start, end int
	text       []byte
}

// edits make the entry's tables have fields, want being the entry after
// and have before. A key added goes after the owned one before it in
// fields, or before the first owned one kept, or where the first one cut
// was, or at the end of the table.
func (f *TOMLFile) edits(tables []tomlTable, fields []Field, have, want map[string]any, nl []byte) []tomlEdit {
	var edits []tomlEdit
	cut := func(r [2]int) { edits = append(edits, tomlEdit{start: r[0], end: r[1]}) }
	table := -1
	for i, t := range tables {
		if t.sub == "" {
			table = i
		}
		for _, fd := range fields {
			if t.sub != "" && t.sub == fd.Key {
				cut(f.widen(t.span))
			}
		}
	}
	if table < 0 { // only subtables: the table goes before them
		at := tables[0].span[0]
		text := slices.Concat([]byte(tomlHeader(f.mapKey, f.name)), nl, tomlLines(fields, want, nl), nl)
		return append(edits, tomlEdit{start: at, end: at, text: text})
	}
	t := tables[table]
	kept := map[string][2]int{} // the lines of the owned keys that stay
	gone := -1                  // where the first owned key cut was
	var add []string
	for _, fd := range fields {
		var kvs []tomlKeyValue
		for _, kv := range t.keys {
			if kv.key == fd.Key {
				kvs = append(kvs, kv)
			}
		}
		v, wanted := want[fd.Key]
		if wanted && len(kvs) == 1 && !kvs[0].dotted && !slices.ContainsFunc(tables, func(t tomlTable) bool { return t.sub == fd.Key }) {
			kept[fd.Key] = kvs[0].line
			if !reflect.DeepEqual(have[fd.Key], v) {
				edits = append(edits, tomlEdit{kvs[0].value[0], kvs[0].value[1], []byte(tomlValue(v))})
			}
			continue
		}
		for _, kv := range kvs {
			cut(kv.line)
			if gone < 0 {
				gone = kv.line[0]
			}
		}
		if wanted {
			add = append(add, fd.Key)
		}
	}
	placed := map[string]int{} // where each owned key is, or goes
	for k, line := range kept {
		placed[k] = line[1]
	}
	for j, fd := range fields {
		if !slices.Contains(add, fd.Key) {
			continue
		}
		next := -1 // the first line of an owned key after it that stays
		for _, g := range fields[j+1:] {
			if line, ok := kept[g.Key]; ok && (next < 0 || line[0] < next) {
				next = line[0]
			}
		}
		at := t.span[1] // each rule below comes before the ones above it
		if gone >= 0 {
			at = gone
		}
		if next >= 0 {
			at = next
		}
		for _, g := range slices.Backward(fields[:j]) {
			if p, ok := placed[g.Key]; ok {
				at = p
				break
			}
		}
		placed[fd.Key] = at
		line := tomlLines([]Field{fd}, want, nl)
		if at == len(f.data) && !bytes.HasSuffix(f.data, []byte("\n")) {
			line = slices.Concat(nl, bytes.TrimSuffix(line, nl)) // the file's last line, and it has no line break
		}
		edits = append(edits, tomlEdit{start: at, end: at, text: line})
	}
	return edits
}

// Remove cuts the entry's tables out, with the blank line before each.
func (f *TOMLFile) Remove() error {
	tables, err := f.tables()
	if err != nil {
		return err
	}
	var edits []tomlEdit
	for _, t := range tables {
		r := f.widen(t.span)
		edits = append(edits, tomlEdit{start: r[0], end: r[1]})
	}
	out := applyEdits(f.data, edits)
	if err := f.check(out, nil); err != nil {
		return fmt.Errorf("%s.%s is not only in [%s.%s] tables, which is all this command edits (%v); remove it by hand", f.mapKey, f.name, f.mapKey, f.name, err)
	}
	f.data = out
	return nil
}

// widen is r, a table to cut, with the blank line before it, or the line
// breaks before it when it ends the file without one.
func (f *TOMLFile) widen(r [2]int) [2]int {
	start, end := r[0], r[1]
	before := f.data[:start]
	last := end == len(f.data) && !bytes.HasSuffix(f.data[start:end], []byte("\n"))
	switch {
	case last && bytes.HasSuffix(before, []byte("\r\n\r\n")):
		start -= 4
	case last && bytes.HasSuffix(before, []byte("\n\n")):
		start -= 2
	case bytes.HasSuffix(before, []byte("\n\r\n")):
		start -= 2
	case bytes.HasSuffix(before, []byte("\n\n")):
		start--
	case start == 0 && bytes.HasPrefix(f.data[end:], []byte("\r\n")):
		end += 2
	case start == 0 && bytes.HasPrefix(f.data[end:], []byte("\n")):
		end++
	}
	return [2]int{start, end}
}

// applyEdits is data with edits made, in file order; at one place, text
// added goes before bytes cut, and an edit that overlaps one before it
// starts where that one ended.
func applyEdits(data []byte, edits []tomlEdit) []byte {
	slices.SortStableFunc(edits, func(a, b tomlEdit) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.end-a.start, b.end-b.start))
	})
	var out []byte
	cur := 0
	for _, e := range edits {
		start := max(e.start, cur)
		out = append(append(out, data[cur:start]...), e.text...)
		cur = max(e.end, start)
	}
	return append(out, data[cur:]...)
}

// check decodes out and compares it with the file before: the entry must
// be want (nil: absent), everything else unchanged.
func (f *TOMLFile) check(out []byte, want any) error {
	doc, err := decodeTOML(out)
	if err != nil {
		return fmt.Errorf("the result would not be valid TOML: %v", err)
	}
	servers, _ := doc[f.mapKey].(map[string]any)
	got, found := servers[f.name]
	switch {
	case want == nil && found:
		return errors.New("the entry would still be there")
	case want != nil && !reflect.DeepEqual(got, want):
		return errors.New("the entry would not read as written")
	}
	if !reflect.DeepEqual(withoutEntry(doc, f.mapKey, f.name), withoutEntry(f.doc, f.mapKey, f.name)) {
		return errors.New("other settings would change")
	}
	return nil
}

// withoutEntry is a shallow copy of doc without the entry, nor the server
// map when that leaves it empty.
func withoutEntry(doc map[string]any, key, name string) map[string]any {
	out := make(map[string]any, len(doc))
	for k, v := range doc {
		out[k] = v
	}
	if servers, ok := doc[key].(map[string]any); ok {
		rest := make(map[string]any, len(servers))
		for k, v := range servers {
			if k != name {
				rest[k] = v
			}
		}
		out[key] = rest
		if len(rest) == 0 {
			delete(out, key)
		}
	}
	return out
}

// Bytes is the file as edited.
func (f *TOMLFile) Bytes() []byte { return f.data }
