package manifest

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/geilt/tairseach-mcp/internal/jsonscan"
	"github.com/geilt/tairseach-mcp/internal/quote"
)

// manifestJSON is the part of a manifest file the package reads; other keys are ignored.
type manifestJSON struct {
	ID             *string     `json:"id"`
	Tools          *[]toolJSON `json:"tools"`
	Implementation *implJSON   `json:"implementation"`
	// Requires is read leniently by requiredPermissions.
	Requires json.RawMessage `json:"requires"`
}

type toolJSON struct {
	Name           *string          `json:"name"`
	Title          string           `json:"title"`
	Description    string           `json:"description"`
	InputSchema    json.RawMessage  `json:"inputSchema"`
	OutputSchema   json.RawMessage  `json:"outputSchema"`
	Annotations    *annotationsJSON `json:"annotations"`
	MCPExpose      *bool            `json:"mcp_expose"`
	MCPExposeCamel *bool            `json:"mcpExpose"`
	TimeoutMs      int              `json:"timeoutMs"`
	Requires       json.RawMessage  `json:"requires"`
}

type annotationsJSON struct {
	Title           string `json:"title"`
	ReadOnlyHint    *bool  `json:"readOnlyHint"`
	DestructiveHint *bool  `json:"destructiveHint"`
	IdempotentHint  *bool  `json:"idempotentHint"`
	OpenWorldHint   *bool  `json:"openWorldHint"`
}

type implJSON struct {
	// Type is "internal", "script" or "proxy"; "" is read as "internal".
	Type    string            `json:"type"`
	Socket  string            `json:"socket"`
	Methods map[string]string `json:"methods"`
	// ToolBindings of script and proxy manifests: the server serves each
	// bound tool under its tool name. The values are for the server.
	ToolBindings map[string]json.RawMessage `json:"toolBindings"`
}

// Implementation types.
const (
	implInternal = "internal"
	implScript   = "script"
	implProxy    = "proxy"
)

// bound reports whether the manifest's tools are served through toolBindings.
func (impl implJSON) bound() bool { return impl.Type == implScript || impl.Type == implProxy }

// schemaFix is the advice given with every rejected input schema.
const schemaFix = `inputSchema must be a JSON Schema object with "type": "object"`

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// ParseFile parses and normalises one manifest. rel is the file's slash path
// relative to the manifests directory, used in Tool.File and in messages.
// A non-nil error is always a *FileError and means the whole file is rejected:
// invalid JSON, a value of the wrong type, no "tools" array, a tool without a
// name, or data over the size limit. Problems with single tools are reported
// in File.Skipped and File.Problems instead.
func ParseFile(rel string, data []byte, opts Options) (*File, error) {
	if limit := opts.maxFileSize(); int64(len(data)) > limit {
		return nil, &FileError{Path: rel, Err: tooLarge(int64(len(data)), limit)}
	}
	// Editors on some systems write a byte order mark; it is not JSON.
	raw := data
	data = bytes.TrimPrefix(data, utf8BOM)

	var m manifestJSON
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, decodeError(rel, data, err)
	}
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return nil, &FileError{Path: rel, Line: 1, Column: 1, Err: errors.New("manifest must be a JSON object, got null")}
	}
	if m.Tools == nil {
		return nil, &FileError{Path: rel, Err: errors.New(`missing "tools" array`)}
	}
	for i, t := range *m.Tools {
		if t.Name == nil || strings.TrimSpace(*t.Name) == "" {
			fe := &FileError{Path: rel, Err: fmt.Errorf(`tools[%d]: tool has no "name"`, i)}
			if off, ok := valueOffset(data, "tools", i); ok {
				fe.Line, fe.Column = lineCol(data, off)
			}
			return nil, fe
		}
	}

	loc := newLocator(raw, data)
	f := &File{Path: rel, idAt: loc.value("id")}
	if m.ID != nil {
		f.ID = *m.ID
	}
	if f.ID == "" {
		f.Problems = append(f.Problems, Problem{File: rel, Severity: Warning, Message: `manifest has no "id"`})
	} else if !PlainWord(f.ID) {
		return nil, &FileError{Path: rel, Line: f.idAt.Line, Column: f.idAt.Column,
			Err: fmt.Errorf(`"id" %s is not a word: at most %d bytes, without line breaks, control or format characters (people and models read it in messages)`, quoteClip(f.ID), MaxWordLen)}
	}
	var impl implJSON
	if m.Implementation != nil {
		impl = *m.Implementation
	}
	switch impl.Type {
	case "", implInternal, implScript, implProxy:
	default:
		fe := &FileError{Path: rel, Err: fmt.Errorf("implementation.type %s is not one of %s, %s, %s",
			quote.Line(clip(impl.Type, 40), quote.Text), implInternal, implScript, implProxy)}
		if off, ok := valueOffset(data, "implementation", "type"); ok {
			fe.Line, fe.Column = lineCol(data, off)
		}
		return nil, fe
	}
	if len(impl.ToolBindings) > 0 && !impl.bound() {
		f.Problems = append(f.Problems, Problem{File: rel, Severity: Warning, Position: loc.key("implementation", "toolBindings"),
			Message: fmt.Sprintf(`implementation.toolBindings is ignored in an %q manifest (set "type": "script" or "proxy", or use implementation.methods)`, cmp.Or(impl.Type, implInternal))})
	}

	perms, warnings := requiredPermissions(m.Requires)
	for _, w := range warnings {
		f.Problems = append(f.Problems, Problem{File: rel, Severity: Warning, Message: w})
	}

	names := make(map[string]bool, len(*m.Tools))
	for i, t := range *m.Tools {
		names[*t.Name] = true
		f.addTool(t, impl, perms, opts.Prefix, func(path ...string) Position { return loc.tool(i, path...) })
	}
	warnOrphans(f, loc, "method mapping", "methods", impl.Methods, names)
	if impl.bound() {
		warnOrphans(f, loc, "tool binding", "toolBindings", impl.ToolBindings, names)
	}
	if bytes.Contains(data, []byte(`"resources"`)) || bytes.Contains(data, []byte(`"prompts"`)) {
		f.parseDeclared(data, f.manifestMethods(impl), impl.Socket)
	}
	return f, nil
}

// warnOrphans warns of each key of entries, implementation.key in the
// file, in name order, that names no tool of the file.
func warnOrphans[V any](f *File, loc *locator, what, key string, entries map[string]V, names map[string]bool) {
	for _, k := range slices.Sorted(maps.Keys(entries)) {
		if !names[k] {
			f.Problems = append(f.Problems, Problem{
				File: f.Path, Tool: k, Severity: Warning, Position: loc.key("implementation", key, k),
				Message: fmt.Sprintf("%s for %s has no tool", what, k),
			})
		}
	}
}

// manifestMethods are the socket methods a manifest's tools call, and
// whether each is read-only (every tool calling it has readOnlyHint true).
func (f *File) manifestMethods(impl implJSON) map[string]bool {
	m := map[string]bool{}
	for _, meth := range impl.Methods {
		if meth != "" {
			m[meth] = false
		}
	}
	if impl.bound() {
		for name := range impl.ToolBindings {
			m[name] = false
		}
	}
	for _, t := range f.Tools {
		if _, ok := m[t.Method]; ok {
			m[t.Method] = t.Annotations.ReadOnlyHint != nil && *t.Annotations.ReadOnlyHint
		}
	}
	return m
}

// addTool normalises t and appends it to f.Tools, or records why it is
// skipped. perms are the permissions the manifest's "requires" names; at
// locates a field of t in the file, or t itself.
func (f *File) addTool(t toolJSON, impl implJSON, perms []string, prefix string, at func(path ...string) Position) {
	toolName := *t.Name
	name, renamed := MCPName(prefix, toolName)
	skip := func(r SkipReason, detail string) {
		f.Skipped = append(f.Skipped, Skipped{Name: name, ToolName: toolName, File: f.Path, Reason: r, Detail: detail, Position: at("name")})
	}
	problemAt := func(pos Position, s Severity, format string, args ...any) {
		f.Problems = append(f.Problems, Problem{File: f.Path, Tool: toolName, Severity: s, Position: pos, Message: fmt.Sprintf(format, args...)})
	}
	if !PlainWord(toolName) {
		toolName = quoteClip(toolName) // what messages show of it
		skip(BadName, "its name is not a word")
		problemAt(at("name"), Error, "tool %s is not exposed: its name is not a word: at most %d bytes, without line breaks, control or format characters (rename it)", toolName, MaxWordLen)
		return
	}
	problem := func(s Severity, format string, args ...any) { problemAt(at("name"), s, format, args...) }
	// schemaAt is the subschema a schema's error names, else the schema.
	schemaAt := func(field string, err error) Position {
		if se, ok := err.(*schemaError); ok {
			if pos := at(append([]string{field}, pointerPath(se.ptr)...)...); pos != at() {
				return pos
			}
		}
		return at(field)
	}

	switch {
	case t.MCPExpose != nil && !*t.MCPExpose:
		skip(Hidden, "mcp_expose is false")
		return
	case t.MCPExposeCamel != nil && !*t.MCPExposeCamel:
		skip(Hidden, "mcpExpose is false")
		return
	}

	method, ok := impl.Methods[toolName]
	if !ok && impl.bound() {
		// The server serves script and proxy tools under their tool name.
		if _, bound := impl.ToolBindings[toolName]; bound {
			method, ok = toolName, true
		} else {
			detail := fmt.Sprintf("no entry in implementation.toolBindings of this %s manifest", impl.Type)
			skip(NoMethod, detail)
			problem(Warning, "tool %s is not exposed: %s (add %q: {...} with how the server runs it)", toolName, detail, toolName)
			return
		}
	}
	if !ok || method == "" {
		detail := "no entry in implementation.methods"
		if ok {
			detail = "empty method in implementation.methods"
		}
		skip(NoMethod, detail)
		problem(Warning, "tool %s is not exposed: %s (add %q: \"<socket method>\")", toolName, detail, toolName)
		return
	}
	if !PlainWord(method) {
		skip(BadName, "its method is not a word")
		problemAt(at("name"), Error, "tool %s is not exposed: its method %s is not a word: at most %d bytes, without line breaks, control or format characters (fix implementation.methods)", toolName, quoteClip(method), MaxWordLen)
		return
	}

	in, err := normaliseSchema(t.InputSchema)
	if err != nil {
		skip(BadSchema, err.Error())
		problemAt(at("inputSchema"), Error, "tool %s is not exposed: %s (%v)", toolName, schemaFix, err)
		return
	}
	in = validUTF8(in)
	if in == nil {
		in = json.RawMessage(`{"type":"object"}`)
	} else if err := checkSchema(in); err != nil {
		skip(BadSchema, err.Error())
		problemAt(schemaAt("inputSchema", err), Error, "tool %s is not exposed: its inputSchema cannot be used: %v", toolName, err)
		return
	}
	out, err := normaliseSchema(t.OutputSchema)
	out = validUTF8(out)
	if err != nil {
		out = nil
		problemAt(at("outputSchema"), Warning, `outputSchema dropped: it must be a JSON Schema object with "type": "object" (%v)`, err)
	} else if out != nil {
		if err := checkSchema(out); err != nil {
			skip(BadOutputSchema, err.Error())
			problemAt(schemaAt("outputSchema", err), Error, "tool %s is not exposed: its outputSchema cannot be used: %v", toolName, err)
			return
		}
	}
	timeout := t.TimeoutMs
	if timeout < 0 {
		timeout = 0
		problemAt(at("timeoutMs"), Warning, "timeoutMs %d is negative; ignored", t.TimeoutMs)
	}

	// The server checks the manifest's permissions and then the tool's own
	// (router/mod.rs), so a tool needs both.
	own, warnings := requiredPermissions(t.Requires)
	for _, w := range warnings {
		problem(Warning, "%s", w)
	}

	tool := Tool{
		Name:         name,
		ToolName:     toolName,
		Method:       method,
		Socket:       impl.Socket,
		Description:  t.Description,
		Title:        t.Title,
		InputSchema:  in,
		OutputSchema: out,
		TimeoutMs:    timeout,
		File:         f.Path,
		ManifestID:   f.ID,
		Renamed:      renamed,
		Permissions:  mergePermissions(perms, own),
	}
	if a := t.Annotations; a != nil {
		tool.Annotations = Annotations{
			Title:           a.Title,
			ReadOnlyHint:    a.ReadOnlyHint,
			DestructiveHint: a.DestructiveHint,
			IdempotentHint:  a.IdempotentHint,
			OpenWorldHint:   a.OpenWorldHint,
		}
		if a.Title != "" {
			tool.Title = a.Title
		}
	}
	f.Tools = append(f.Tools, tool)
	f.toolAt = append(f.toolAt, at("name"))
}

// validUTF8 returns the JSON schema with every invalid UTF-8 sequence
// replaced by U+FFFD, as encoding/json decodes strings: schemas are passed to
// clients as they are, and all that is written to them must be UTF-8. Bytes
// outside strings are ASCII in valid JSON, so the result is valid JSON.
func validUTF8(schema json.RawMessage) json.RawMessage {
	if schema == nil || utf8.Valid(schema) {
		return schema
	}
	return bytes.ToValidUTF8(schema, []byte("\uFFFD"))
}

// normaliseSchema compacts a schema and checks it is an object schema whose
// "type" is "object", adding that "type" first when it is missing. An absent
// or null schema gives nil, nil. The error text says what is wrong.
func normaliseSchema(raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	c := buf.Bytes()
	if c[0] != '{' {
		return nil, fmt.Errorf("got a JSON %s", jsonscan.Kind(c))
	}

	// Scan the members for "type".
	var typ []byte
	dup := false
	err := jsonscan.Members(c, func(key, value []byte) bool {
		if jsonscan.KeyIs(key, "type") {
			dup = typ != nil
			typ = value
		}
		return !dup
	})
	if err != nil {
		return nil, err // "invalid JSON at byte N: …"
	}
	if dup {
		return nil, errors.New(`duplicate "type" key`)
	}
	if typ == nil {
		if len(c) == 2 { // {}
			return json.RawMessage(`{"type":"object"}`), nil
		}
		out := make([]byte, 0, len(c)+16)
		out = append(out, `{"type":"object",`...)
		return append(out, c[1:]...), nil
	}
	var s string
	if json.Unmarshal(typ, &s) != nil || s != "object" {
		return nil, fmt.Errorf(`got "type": %s`, clip(string(typ), 40))
	}
	return slices.Clip(c), nil
}

func tooLarge(size, limit int64) error {
	return fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooLarge, size, limit)
}

// typeError is a JSON value of the wrong type, described in manifest terms;
// field is the dotted path of the value, "" for the whole document.
type typeError struct {
	field, got, want string
	err              error
}

func (e *typeError) Error() string {
	if e.field == "" {
		return fmt.Sprintf("manifest must be a JSON object, got %s", e.got)
	}
	return fmt.Sprintf("%s: got %s, want %s", e.field, e.got, e.want)
}

func (e *typeError) Unwrap() error { return e.err }

// decodeError turns an error from json.Unmarshal into a positioned *FileError.
func decodeError(rel string, data []byte, err error) *FileError {
	fe := &FileError{Path: rel}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		fe.Err = fmt.Errorf("invalid JSON: %w", err)
		// Offset counts the bytes read including the offending one.
		fe.Line, fe.Column = lineCol(data, se.Offset-1)
	case errors.As(err, &te):
		fe.Err = &typeError{field: te.Field, got: te.Value, want: goKindName(te.Type), err: err}
		fe.Line, fe.Column = lineCol(data, valueStart(data, te.Offset-1))
	default:
		fe.Err = fmt.Errorf("decoding manifest: %w", err)
	}
	return fe
}

// goKindName names the JSON type a Go type decodes from.
func goKindName(t reflect.Type) string {
	if t == nil {
		return "a value"
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	case reflect.Pointer:
		return goKindName(t.Elem())
	}
	return t.String()
}
