package main

// Codex's config.toml. No Go TOML library writes a file back with its
// comments and layout, so the [mcp_servers.tairseach] table is edited as
// text: its lines are found with go-toml's parser, replaced or cut out, and
// the result is decoded again and compared with the file before: the rest
// must decode to the same values, the entry to the one meant, or the file
// is left alone.

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// tomlFile is a TOML client file and its decoded values.
type tomlFile struct {
	key  string // the server tables' prefix: mcp_servers
	data []byte
	doc  map[string]any
}

func parseTOMLFile(data []byte, key string) (*tomlFile, error) {
	doc, err := decodeTOML(data)
	if err != nil {
		return nil, err
	}
	return &tomlFile{key: key, data: data, doc: doc}, nil
}

func decodeTOML(data []byte) (map[string]any, error) {
	doc := map[string]any{}
	if err := toml.Unmarshal(data, &doc); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			line, col := de.Position()
			return nil, &syntaxError{line: line, col: col, cause: strings.TrimPrefix(de.Error(), "toml: ")}
		}
		return nil, err
	}
	return doc, nil
}

// tomlEntry is the entry's table, as install writes it.
func tomlEntry(key string, e serverEntry, urlKey string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "[%s.%s]\n", key, entryName)
	if e.url == "" {
		fmt.Fprintf(&b, "command = %s\n", tomlString(e.command))
		quoted := make([]string, len(e.args))
		for i, a := range e.args {
			quoted[i] = tomlString(a)
		}
		fmt.Fprintf(&b, "args = [%s]\n", strings.Join(quoted, ", "))
		return b.Bytes()
	}
	fmt.Fprintf(&b, "%s = %s\n", urlKey, tomlString(e.url))
	if e.token != "" {
		fmt.Fprintf(&b, "http_headers = { Authorization = %s }\n", tomlString("Bearer "+e.token))
	}
	return b.Bytes()
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
func (f *tomlFile) servers() map[string]any {
	m, _ := f.doc[f.key].(map[string]any)
	return m
}

// same reports whether the file holds the entry block would write.
func (f *tomlFile) entry(block []byte) (found, same bool, err error) {
	have, found := f.servers()[entryName]
	if !found {
		return false, false, nil
	}
	want, err := decodeTOML(block)
	if err != nil {
		return true, false, err
	}
	wantServers, _ := want[f.key].(map[string]any)
	return true, reflect.DeepEqual(have, wantServers[entryName]), nil
}

// tables are the byte ranges of the [mcp_servers.tairseach] table and its
// subtables: from the header's line to the end of the last key's line.
func (f *tomlFile) tables() ([][2]int, error) {
	var p unstable.Parser
	p.Reset(f.data)
	var out [][2]int
	cur := -1
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			cur = -1
			var keys []string
			start, end := -1, 0
			for it := e.Key(); it.Next(); {
				k := it.Node()
				keys = append(keys, string(k.Data))
				if start < 0 {
					start = int(k.Raw.Offset)
				}
				end = int(k.Raw.Offset + k.Raw.Length)
			}
			if e.Kind == unstable.Table && len(keys) >= 2 && keys[0] == f.key && keys[1] == entryName {
				out = append(out, [2]int{lineStart(f.data, start), lineEnd(f.data, end)})
				cur = len(out) - 1
			}
		case unstable.KeyValue:
			if cur >= 0 {
				out[cur][1] = lineEnd(f.data, int(e.Raw.Offset+e.Raw.Length))
			}
		}
	}
	return out, p.Error()
}

func lineStart(data []byte, off int) int { return bytes.LastIndexByte(data[:off], '\n') + 1 }

func lineEnd(data []byte, off int) int {
	if i := bytes.IndexByte(data[off:], '\n'); i >= 0 {
		return off + i + 1
	}
	return len(data)
}

// set writes block in place of the entry's tables, or at the end of the
// file after a blank line.
func (f *tomlFile) set(block []byte) error {
	tables, err := f.tables()
	if err != nil {
		return err
	}
	nl := []byte("\n")
	if bytes.Contains(f.data, []byte("\r\n")) {
		nl = []byte("\r\n")
		block = bytes.ReplaceAll(block, []byte("\n"), nl)
	}
	var out []byte
	switch {
	case len(tables) > 0:
		out = f.cut(tables[1:])
		first := tables[0]
		if !bytes.HasSuffix(out[first[0]:first[1]], []byte("\n")) {
			block = bytes.TrimSuffix(block, nl) // the file's last line, and it has no line break
		}
		out = slices.Concat(out[:first[0]], block, out[first[1]:])
	case len(f.data) == 0:
		out = block
	case !bytes.HasSuffix(f.data, []byte("\n")):
		// No line break at the end: the file keeps none, and cut
		// takes out all that was added.
		out = slices.Concat(f.data, nl, nl, bytes.TrimSuffix(block, nl))
	default:
		out = slices.Concat(f.data, nl, block)
	}
	want, _ := decodeTOML(block)
	wantServers, _ := want[f.key].(map[string]any)
	if err := f.check(out, wantServers[entryName]); err != nil {
		return fmt.Errorf("cannot add the [%s.%s] table safely (%v); add it by hand:\n\n%s", f.key, entryName, err, block)
	}
	f.data = out
	return nil
}

// remove cuts the entry's tables out, with the blank line before each.
func (f *tomlFile) remove() error {
	tables, err := f.tables()
	if err != nil {
		return err
	}
	out := f.cut(tables)
	if err := f.check(out, nil); err != nil {
		return fmt.Errorf("%s.%s is not only in [%s.%s] tables, which is all this command edits (%v); remove it by hand", f.key, entryName, f.key, entryName, err)
	}
	f.data = out
	return nil
}

// cut is the file without the given ranges, which are in file order; a
// blank line before a range goes with it, and so does the line break
// before that when the range ends the file without one.
func (f *tomlFile) cut(ranges [][2]int) []byte {
	out := append([]byte{}, f.data...)
	for i := len(ranges) - 1; i >= 0; i-- {
		start, end := ranges[i][0], ranges[i][1]
		last := end == len(out) && !bytes.HasSuffix(out[start:end], []byte("\n"))
		switch before := out[:start]; {
		case last && bytes.HasSuffix(before, []byte("\r\n\r\n")):
			start -= 4
		case last && bytes.HasSuffix(before, []byte("\n\n")):
			start -= 2
		case bytes.HasSuffix(before, []byte("\n\r\n")):
			start -= 2
		case bytes.HasSuffix(before, []byte("\n\n")):
			start--
		case start == 0 && bytes.HasPrefix(out[end:], []byte("\r\n")):
			end += 2
		case start == 0 && bytes.HasPrefix(out[end:], []byte("\n")):
			end++
		}
		out = append(out[:start], out[end:]...)
	}
	return out
}

// check decodes out and compares it with the file before: the entry must
// be want (nil: absent), everything else unchanged.
func (f *tomlFile) check(out []byte, want any) error {
	doc, err := decodeTOML(out)
	if err != nil {
		return fmt.Errorf("the result would not be valid TOML: %v", err)
	}
	servers, _ := doc[f.key].(map[string]any)
	got, found := servers[entryName]
	switch {
	case want == nil && found:
		return errors.New("the entry would still be there")
	case want != nil && !reflect.DeepEqual(got, want):
		return errors.New("the entry would not read as written")
	}
	if !reflect.DeepEqual(withoutEntry(doc, f.key), withoutEntry(f.doc, f.key)) {
		return errors.New("other settings would change")
	}
	return nil
}

// withoutEntry is a shallow copy of doc without the entry, nor the server
// map when that leaves it empty.
func withoutEntry(doc map[string]any, key string) map[string]any {
	out := make(map[string]any, len(doc))
	for k, v := range doc {
		out[k] = v
	}
	if servers, ok := doc[key].(map[string]any); ok {
		rest := make(map[string]any, len(servers))
		for k, v := range servers {
			if k != entryName {
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

func (f *tomlFile) bytes() []byte { return f.data }
