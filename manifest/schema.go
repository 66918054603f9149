package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/geilt/tairseach-mcp/internal/quote"
)

// Limits on a tool's schema, checked at load so that validating arguments or
// results against it is bounded.
const (
	// MaxSchemaDepth is the longest chain of nested subschemas a schema may
	// have, counting each $ref as one step.
	MaxSchemaDepth = 64
	// MaxSchemaSize is the most subschemas a schema may expand to when each
	// $ref is replaced by its target.
	MaxSchemaSize = 10000
)

// checkSchema reports why schema, compact JSON of an object schema, cannot be
// used to validate arguments or results safely, or nil when it can.
//
// jsonschema-go, which the server validates with, follows $ref, $dynamicRef,
// allOf, anyOf, oneOf, not, if/then/else and dependentSchemas on the same
// instance without any bound: a schema that refers back to itself through
// those ({"$ref": "#"}, or $defs a → b → a) recurses until the process dies
// of a stack overflow. A schema that refers to itself only by descending into
// the instance ({"properties": {"child": {"$ref": "#"}}}) terminates, but
// after as many steps as the instance is deep (up to encoding/json's 10,000
// levels), and more than exponentially so when the recursion branches
// ({"allOf": [{"$ref":"#/$defs/t"}, {"$ref":"#/$defs/t"}]} under it). No
// manifest of the real server uses $ref at all, so every cycle is refused:
// the $ref graph must be acyclic, and then MaxSchemaDepth and MaxSchemaSize
// bound the work of one validation by the size of the instance.
//
// It also refuses what jsonschema-go would reject or what could never match
// as meant: a keyword of the wrong type, an unknown "type", a pattern that
// does not compile, a $ref that does not resolve within the schema (remote
// references are not loaded), $dynamicRef and $id below the root (which the
// check cannot follow as jsonschema-go does), an unsupported $schema. Every
// schema it accepts, jsonschema-go resolves (FuzzCheckSchema): it does not
// call jsonschema-go itself, which would cost a load several times its time.
func checkSchema(schema json.RawMessage) error {
	var v any
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("invalid JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("invalid JSON: data after the schema")
	}
	g := &schemaGraph{nodes: map[string]*schemaNode{}, anchors: map[string]string{}}
	if err := g.walk(v, "", 1); err != nil {
		return err
	}
	if err := g.link(); err != nil {
		return err
	}
	return g.acyclic()
}

// schemaGraph is a schema's subschemas, by JSON Pointer from the root.
type schemaGraph struct {
	nodes   map[string]*schemaNode
	order   []string          // pointers in walk order, for stable messages
	anchors map[string]string // $anchor and $dynamicAnchor → pointer
	rootID  *url.URL          // the root's $id; empty when absent
}

// schemaNode is one subschema.
type schemaNode struct {
	applied []string // pointers of the subschemas applied to the instance or a part of it
	ref     string   // $ref, "" when absent
	state   int8     // for acyclic: 0 unvisited, 1 on the stack, 2 done
	size    int      // subschemas reached from here, $refs expanded; capped
	depth   int      // longest chain from here
}

var jsonTypes = []string{"array", "boolean", "integer", "null", "number", "object", "string"}

// Keywords whose value is one subschema, an array of them, or an object of them.
var (
	schemaKeywords = []string{"additionalItems", "additionalProperties", "contains", "else", "if", "not",
		"propertyNames", "then", "unevaluatedItems", "unevaluatedProperties"}
	schemaArrayKeywords = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
	schemaMapKeywords   = []string{"$defs", "definitions", "dependentSchemas", "patternProperties", "properties"}
	stringKeywords      = []string{"$anchor", "$comment", "$dynamicAnchor", "$id", "$ref", "$schema",
		"contentEncoding", "contentMediaType", "description", "format", "pattern", "title"}
	numberKeywords  = []string{"exclusiveMaximum", "exclusiveMinimum", "maximum", "minimum", "multipleOf"}
	countKeywords   = []string{"maxContains", "maxItems", "maxLength", "maxProperties", "minContains", "minItems", "minLength", "minProperties"}
	boolKeywords    = []string{"deprecated", "readOnly", "uniqueItems", "writeOnly"}
	schemaVersions  = []string{"", "http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft-07/schema#", "https://json-schema.org/draft/2020-12/schema"}
	errNotSupported = errors.New("not supported in tool schemas")
)

// at prefixes an error about the subschema at ptr with its location.
func at(ptr, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if ptr == "" {
		return errors.New(msg)
	}
	return &schemaError{ptr: ptr, msg: msg}
}

// schemaError is a problem of the subschema at a JSON Pointer, which
// ParseFile turns into the problem's position.
type schemaError struct {
	ptr, msg string
}

func (e *schemaError) Error() string { return "at " + e.ptr + ": " + e.msg }

// walk checks the subschema v at ptr, depth levels below the root, and its
// subschemas, adding them to g.
func (g *schemaGraph) walk(v any, ptr string, depth int) error {
	if depth > MaxSchemaDepth {
		return at(ptr, "subschemas nested more than %d deep", MaxSchemaDepth)
	}
	if len(g.nodes) >= MaxSchemaSize {
		return fmt.Errorf("more than %d subschemas", MaxSchemaSize)
	}
	n := &schemaNode{}
	g.nodes[ptr] = n
	g.order = append(g.order, ptr)
	var obj map[string]any
	switch v := v.(type) {
	case bool:
		return nil
	case map[string]any:
		obj = v
	default:
		return at(ptr, "a schema must be an object or a boolean, got %s", describeJSON(v))
	}
	key := func(k string) string { return ptr + "/" + escapePointer(k) }
	child := func(v any, p string) error {
		n.applied = append(n.applied, p)
		return g.walk(v, p, depth+1)
	}

	// A null is what jsonschema-go reads as absent.
	for k, x := range obj {
		if x == nil {
			delete(obj, k)
		}
	}
	// encoding/json, and so jsonschema-go, also takes "AnyOf" or "ANYOF"
	// for anyOf: refuse such spellings rather than check the schema
	// differently from how it is used.
	for k := range obj {
		if kw := foldedKeyword(k); kw != "" {
			return at(ptr, "%s: keywords are case-sensitive; did you mean %q?", quote.IdentLine(k, quote.Name), kw)
		}
	}
	for _, k := range stringKeywords {
		if x, ok := obj[k]; ok {
			if _, ok := x.(string); !ok {
				return at(ptr, "%s: got %s, want a string", k, describeJSON(x))
			}
		}
	}
	for _, k := range numberKeywords {
		if x, ok := obj[k]; ok {
			if _, ok := x.(json.Number); !ok {
				return at(ptr, "%s: got %s, want a number", k, describeJSON(x))
			}
		}
	}
	if x, ok := obj["multipleOf"].(json.Number); ok {
		if f, err := x.Float64(); err != nil || f <= 0 {
			return at(ptr, "multipleOf: got %s, want a number greater than 0", x)
		}
	}
	for _, k := range countKeywords {
		if x, ok := obj[k]; ok {
			if num, ok := x.(json.Number); !ok || !isCount(num) {
				return at(ptr, "%s: got %s, want a non-negative integer", k, describeJSON(x))
			}
		}
	}
	for _, k := range boolKeywords {
		if x, ok := obj[k]; ok {
			if _, ok := x.(bool); !ok {
				return at(ptr, "%s: got %s, want true or false", k, describeJSON(x))
			}
		}
	}
	if x, ok := obj["type"]; ok {
		if err := checkType(x); err != nil {
			return at(ptr, "type: %v", err)
		}
	}
	for _, k := range []string{"required", "enum", "examples"} {
		x, ok := obj[k]
		if !ok {
			continue
		}
		arr, ok := x.([]any)
		if !ok {
			return at(ptr, "%s: got %s, want an array", k, describeJSON(x))
		}
		if k == "required" {
			for _, e := range arr {
				if _, ok := e.(string); !ok {
					return at(ptr, "required: got %s in the array, want property names (strings)", describeJSON(e))
				}
			}
		}
	}
	if p, ok := obj["pattern"].(string); ok {
		if _, err := regexp.Compile(p); err != nil {
			return at(ptr, "pattern: %v", err)
		}
	}
	if s, ok := obj["$schema"].(string); ok && !slices.Contains(schemaVersions, s) {
		return at(ptr, "$schema %s is %v (use draft-07 or 2020-12, or leave it out)", quote.Line(s, quote.Text), errNotSupported)
	}
	if _, ok := obj["$dynamicRef"]; ok {
		return at(ptr, "$dynamicRef is %v (use $ref)", errNotSupported)
	}
	if _, ok := obj["$vocabulary"]; ok {
		return at(ptr, "$vocabulary is %v", errNotSupported)
	}
	if id, ok := obj["$id"].(string); ok {
		if ptr != "" {
			return at(ptr, "$id below the root is %v (refer to the subschema by JSON Pointer, e.g. \"$ref\": \"#/$defs/name\")", errNotSupported)
		}
		u, err := url.Parse(id)
		if err != nil {
			return at(ptr, "$id: %v", err)
		}
		if !u.IsAbs() || u.Fragment != "" {
			return at(ptr, "$id %s: want an absolute URI without a fragment, e.g. \"https://example.com/schemas/tool.json\"", quote.Line(id, quote.Text))
		}
		g.rootID = u
	}
	for _, k := range []string{"$anchor", "$dynamicAnchor"} {
		if a, ok := obj[k].(string); ok {
			if prev, dup := g.anchors[a]; dup && prev != ptr {
				return at(ptr, "%s %s: also defined at %s", k, quote.Line(a, quote.Text), pointerOrRoot(prev))
			}
			g.anchors[a] = ptr
		}
	}
	if r, ok := obj["$ref"].(string); ok {
		n.ref = r
	}
	if _, ok := obj["$defs"]; ok {
		if _, ok := obj["definitions"]; ok {
			return at(ptr, "both $defs and definitions: keep one")
		}
	}

	// Subschemas, in a fixed order.
	for _, k := range schemaKeywords {
		if x, ok := obj[k]; ok {
			if err := child(x, key(k)); err != nil {
				return err
			}
		}
	}
	if x, ok := obj["contentSchema"]; ok {
		// An annotation: jsonschema-go resolves it but never applies it.
		if err := g.walk(x, key("contentSchema"), depth+1); err != nil {
			return err
		}
	}
	for _, k := range schemaArrayKeywords {
		x, ok := obj[k]
		if !ok {
			continue
		}
		arr, ok := x.([]any)
		if !ok || len(arr) == 0 && k != "prefixItems" {
			return at(ptr, "%s: got %s, want a non-empty array of schemas", k, describeJSON(x))
		}
		for i, e := range arr {
			if err := child(e, key(k)+"/"+strconv.Itoa(i)); err != nil {
				return err
			}
		}
	}
	if x, ok := obj["items"]; ok {
		if arr, ok := x.([]any); ok {
			for i, e := range arr {
				if err := child(e, key("items")+"/"+strconv.Itoa(i)); err != nil {
					return err
				}
			}
		} else if err := child(x, key("items")); err != nil {
			return err
		}
	}
	for _, k := range schemaMapKeywords {
		x, ok := obj[k]
		if !ok {
			continue
		}
		m, ok := x.(map[string]any)
		if !ok {
			return at(ptr, "%s: got %s, want an object of schemas", k, describeJSON(x))
		}
		for _, name := range slices.Sorted(maps.Keys(m)) {
			if k == "patternProperties" {
				if _, err := regexp.Compile(name); err != nil {
					return at(ptr, "patternProperties: %v", err)
				}
			}
			p := key(k) + "/" + escapePointer(name)
			if k == "$defs" || k == "definitions" {
				// Definitions apply only where referred to.
				if err := g.walk(m[name], p, depth+1); err != nil {
					return err
				}
				continue
			}
			if err := child(m[name], p); err != nil {
				return err
			}
		}
	}
	if x, ok := obj["dependencies"]; ok {
		m, ok := x.(map[string]any)
		if !ok {
			return at(ptr, "dependencies: got %s, want an object", describeJSON(x))
		}
		for _, name := range slices.Sorted(maps.Keys(m)) {
			if arr, ok := m[name].([]any); ok {
				for _, e := range arr {
					if _, ok := e.(string); !ok {
						return at(ptr, "dependencies: %s: got %s in the array, want property names (strings)", quote.IdentLine(name, quote.Name), describeJSON(e))
					}
				}
				continue
			}
			if err := child(m[name], key("dependencies")+"/"+escapePointer(name)); err != nil {
				return err
			}
		}
	}
	if x, ok := obj["dependentRequired"]; ok {
		m, ok := x.(map[string]any)
		if !ok {
			return at(ptr, "dependentRequired: got %s, want an object of arrays of property names", describeJSON(x))
		}
		for name, e := range m {
			arr, ok := e.([]any)
			if !ok {
				return at(ptr, "dependentRequired: %s: got %s, want an array of property names", quote.IdentLine(name, quote.Name), describeJSON(e))
			}
			for _, s := range arr {
				if _, ok := s.(string); !ok {
					return at(ptr, "dependentRequired: %s: got %s in the array, want property names (strings)", quote.IdentLine(name, quote.Name), describeJSON(s))
				}
			}
		}
	}
	return nil
}

// otherKeywords are the keywords jsonschema-go reads that the lists above lack.
var otherKeywords = []string{"$dynamicRef", "$vocabulary", "const", "contentSchema", "default", "dependencies",
	"dependentRequired", "enum", "examples", "items", "required", "type"}

// foldedKeyword returns the keyword k matches when case is ignored, as
// encoding/json matches keys, if k is not that keyword itself; else "".
func foldedKeyword(k string) string {
	for _, list := range [][]string{schemaKeywords, schemaArrayKeywords, schemaMapKeywords, stringKeywords,
		numberKeywords, countKeywords, boolKeywords, otherKeywords} {
		for _, kw := range list {
			if k == kw {
				return ""
			}
			if strings.EqualFold(k, kw) {
				return kw
			}
		}
	}
	return ""
}

// link resolves every $ref to the pointer of its target.
func (g *schemaGraph) link() error {
	base := g.rootID
	if base == nil {
		base = &url.URL{}
	}
	for _, ptr := range g.order {
		n := g.nodes[ptr]
		if n.ref == "" {
			continue
		}
		u, err := url.Parse(n.ref)
		if err != nil {
			return at(ptr, "$ref %s: %v", quote.Line(n.ref, quote.Text), err)
		}
		target := base.ResolveReference(u)
		frag := target.Fragment
		target.Fragment = ""
		target.RawFragment = ""
		if target.String() != base.String() {
			return at(ptr, "$ref %s refers outside the schema; remote schemas are %v (copy it under $defs and use \"#/$defs/name\")", quote.Line(n.ref, quote.Text), errNotSupported)
		}
		var to string
		var ok bool
		if frag == "" || strings.HasPrefix(frag, "/") {
			_, ok = g.nodes[frag]
			to = frag
		} else {
			to, ok = g.anchors[frag]
		}
		if !ok {
			return at(ptr, "$ref %s does not resolve to a subschema of this schema", quote.Line(n.ref, quote.Text))
		}
		n.applied = append(n.applied, to)
	}
	return nil
}

// acyclic checks that no subschema can reach itself and that the schema
// stays within MaxSchemaDepth and MaxSchemaSize with its $refs expanded.
func (g *schemaGraph) acyclic() error {
	var visit func(ptr string, stack []string) error
	visit = func(ptr string, stack []string) error {
		n := g.nodes[ptr]
		switch n.state {
		case 1:
			i := slices.Index(stack, ptr)
			chain := make([]string, 0, len(stack)-i+1)
			for _, p := range append(stack[i:], ptr) {
				chain = append(chain, "#"+p)
			}
			return fmt.Errorf("$ref cycle %s: the schema refers to itself; recursive schemas are %v", strings.Join(chain, " → "), errNotSupported)
		case 2:
			return nil
		}
		n.state = 1
		stack = append(stack, ptr)
		n.size, n.depth = 1, 1
		for _, c := range n.applied {
			if err := visit(c, stack); err != nil {
				return err
			}
			cn := g.nodes[c]
			n.size = min(n.size+cn.size, MaxSchemaSize+1)
			n.depth = max(n.depth, cn.depth+1)
		}
		n.state = 2
		return nil
	}
	if err := visit("", nil); err != nil {
		return err
	}
	// Definitions not reachable from the root are never applied, but a cycle
	// among them is still a mistake worth reporting.
	for _, ptr := range g.order {
		if err := visit(ptr, nil); err != nil {
			return err
		}
	}
	root := g.nodes[""]
	if root.size > MaxSchemaSize {
		return fmt.Errorf("the schema expands to more than %d subschemas through $ref", MaxSchemaSize)
	}
	if root.depth > MaxSchemaDepth {
		return fmt.Errorf("subschemas nested more than %d deep through $ref", MaxSchemaDepth)
	}
	return nil
}

// checkType checks the value of a "type" keyword.
func checkType(x any) error {
	check := func(s string) error {
		if !slices.Contains(jsonTypes, s) {
			return fmt.Errorf("%s is not a JSON Schema type (use one of %s)", quote.Line(s, quote.Name), strings.Join(jsonTypes, ", "))
		}
		return nil
	}
	switch x := x.(type) {
	case string:
		return check(x)
	case []any:
		if len(x) == 0 {
			return errors.New("got an empty array, want a type name or a non-empty array of them")
		}
		seen := map[string]bool{}
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return fmt.Errorf("got %s in the array, want type names", describeJSON(e))
			}
			if err := check(s); err != nil {
				return err
			}
			if seen[s] {
				return fmt.Errorf("%q appears twice", s)
			}
			seen[s] = true
		}
		return nil
	}
	return fmt.Errorf("got %s, want a type name or an array of them", describeJSON(x))
}

func isCount(n json.Number) bool {
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		f, ferr := n.Float64()
		return ferr == nil && f >= 0 && f == float64(int64(f))
	}
	return i >= 0
}

// describeJSON names the JSON type of a decoded value, with a short excerpt for scalars.
func describeJSON(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(v)
	case json.Number:
		return "the number " + clip(string(v), 20)
	case string:
		return "the string " + quote.Line(clip(v, 40), quote.Text)
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// escapePointer escapes a JSON Pointer reference token.
func escapePointer(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

func pointerOrRoot(ptr string) string {
	if ptr == "" {
		return "the root"
	}
	return ptr
}
