package check

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/geilt/tairseach-mcp/internal/jsonscan"
	"github.com/geilt/tairseach-mcp/internal/quote"
)

// outputCheck validates a tool's results against its outputSchema.
//
// Decoding a result of megabytes into Go values just to validate it would
// cost more than the rest of the call. Tairseach's output schemas are
// shallow: top-level type, required, properties and additionalProperties,
// with properties that mostly name a type. Such a schema is checked on the
// raw JSON, decoding only the properties whose schemas need more than a type
// check. Any other schema is validated in full by jsonschema-go.
type outputCheck struct {
	full *jsonschema.Resolved // nil when the shallow check applies

	required    []string
	props       map[string]propCheck
	closed      bool // additionalProperties: false
	propsSorted []string
}

// propCheck checks one top-level property.
type propCheck struct {
	types []string             // allowed JSON Schema types; nil allows any
	sub   *jsonschema.Resolved // non-nil: decode the value and validate it
}

// shallowTop and typeOnly are the keywords the shallow check understands at
// the top level and in a property. Annotations change nothing (jsonschema-go
// does not assert "format").
var (
	shallowTop = []string{"type", "required", "properties", "additionalProperties", "description", "title", "$schema", "$comment", "examples"}
	typeOnly   = []string{"type", "description", "title", "format", "$comment", "examples", "default", "deprecated", "readOnly", "writeOnly"}
)

// newOutputCheck prepares the check of schema; compile resolves (and
// caches) a schema.
func newOutputCheck(schema json.RawMessage, compile func(json.RawMessage) (*jsonschema.Resolved, error)) (*outputCheck, error) {
	full := func() (*outputCheck, error) {
		r, err := compile(schema)
		if err != nil {
			return nil, err
		}
		return &outputCheck{full: r}, nil
	}
	// References resolve against the root; checking parts alone would break them.
	if bytes.Contains(schema, []byte(`"$ref"`)) || bytes.Contains(schema, []byte(`"$dynamicRef"`)) {
		return full()
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(schema, &top) != nil {
		return full()
	}
	for k := range top {
		if !slices.Contains(shallowTop, k) {
			return full()
		}
	}
	if t, ok := top["type"]; ok && string(t) != `"object"` {
		return full()
	}
	c := &outputCheck{props: map[string]propCheck{}}
	if raw, ok := top["required"]; ok && json.Unmarshal(raw, &c.required) != nil {
		return full()
	}
	if raw, ok := top["additionalProperties"]; ok {
		switch string(raw) {
		case "true":
		case "false":
			c.closed = true
		default:
			return full()
		}
	}
	var props map[string]json.RawMessage
	if raw, ok := top["properties"]; ok && json.Unmarshal(raw, &props) != nil {
		return full()
	}
	for name, raw := range props {
		var p map[string]json.RawMessage
		if json.Unmarshal(raw, &p) != nil {
			return full() // a boolean schema
		}
		pc, simple := propCheck{}, true
		for k := range p {
			if !slices.Contains(typeOnly, k) {
				simple = false
			}
		}
		if t, ok := p["type"]; ok {
			if pc.types = schemaTypes(t); pc.types == nil {
				return full()
			}
		}
		if !simple {
			r, err := compile(raw)
			if err != nil {
				return nil, err
			}
			pc.sub = r
		}
		c.props[name] = pc
		c.propsSorted = append(c.propsSorted, name)
	}
	slices.Sort(c.propsSorted)
	return c, nil
}

// schemaTypes reads a "type" keyword: a type name or an array of them. It
// returns nil for anything else, which the full validator then reports.
func schemaTypes(raw json.RawMessage) []string {
	var many []string
	var one string
	if json.Unmarshal(raw, &one) == nil {
		many = []string{one}
	} else if json.Unmarshal(raw, &many) != nil || len(many) == 0 {
		return nil
	}
	for _, t := range many {
		if !slices.Contains(jsonTypes, t) {
			return nil
		}
	}
	return many
}

var jsonTypes = []string{"object", "array", "string", "number", "integer", "boolean", "null"}

// check validates result, valid compact JSON, and returns "" or what is
// wrong.
func (c *outputCheck) check(result []byte) string { return c.checkShowing(result, false) }

// checkShowing is check; with redact, what it returns quotes no value of
// the result, for logs, which may be kept where results should not be.
func (c *outputCheck) checkShowing(result []byte, redact bool) string {
	show := excerptValue
	if redact {
		show = JSONType
	}
	if c.full != nil {
		var v any
		if err := json.Unmarshal(result, &v); err != nil {
			return err.Error()
		}
		if err := c.full.Validate(v); err != nil {
			if redact {
				return redactValidation(err.Error())
			}
			return err.Error()
		}
		return ""
	}
	if len(result) == 0 || result[0] != '{' {
		return "type: the result is not a JSON object"
	}
	seen := make(map[string]bool, len(c.props)+len(c.required))
	var problem string
	// result is valid (socketrpc checked it), so Members cannot fail.
	jsonscan.Members(result, func(key, value []byte) bool {
		name, err := jsonscan.Key(key)
		if err != nil {
			problem = "invalid property name"
			return false
		}
		seen[name] = true
		pc, ok := c.props[name]
		if !ok {
			if c.closed {
				problem = fmt.Sprintf("unexpected additional property %s", quote.IdentLine(name, quote.Name))
				return false
			}
			return true
		}
		if pc.types != nil && !slices.ContainsFunc(pc.types, func(t string) bool { return hasType(value, t) }) {
			problem = fmt.Sprintf("property %s: type: %s is not %s", quote.IdentLine(name, quote.Name), show(value), strings.Join(pc.types, " or "))
			return false
		}
		if pc.sub != nil {
			var v any
			if err := json.Unmarshal(value, &v); err != nil {
				problem = fmt.Sprintf("property %s: %v", quote.IdentLine(name, quote.Name), err)
				return false
			}
			if err := pc.sub.Validate(v); err != nil {
				msg := err.Error()
				if redact {
					msg = redactValidation(msg)
				}
				problem = fmt.Sprintf("property %s: %s", quote.IdentLine(name, quote.Name), msg)
				return false
			}
		}
		return true
	})
	if problem != "" {
		return problem
	}
	var missing []string
	for _, r := range c.required {
		if !seen[r] {
			missing = append(missing, strconv.Quote(r))
		}
	}
	if len(missing) > 0 {
		return "required: missing properties: [" + strings.Join(missing, ",") + "]"
	}
	return ""
}

// hasType reports whether the valid JSON value has JSON Schema type t.
func hasType(v []byte, t string) bool {
	switch t {
	case "object":
		return v[0] == '{'
	case "array":
		return v[0] == '['
	case "string":
		return v[0] == '"'
	case "boolean":
		return v[0] == 't' || v[0] == 'f'
	case "null":
		return v[0] == 'n'
	case "number":
		return v[0] == '-' || (v[0] >= '0' && v[0] <= '9')
	case "integer":
		if !hasType(v, "number") {
			return false
		}
		if !bytes.ContainsAny(v, ".eE") {
			return true
		}
		f, err := strconv.ParseFloat(string(v), 64)
		return err == nil && f == float64(int64(f))
	}
	return false
}

// JSONType names the type of the valid JSON value v, with its article.
func JSONType(v []byte) string {
	switch k := jsonscan.Kind(v); k {
	case "":
		return "nothing"
	case "null":
		return k
	case "object", "array":
		return "an " + k
	default:
		return "a " + k
	}
}

// redactValidation keeps of a jsonschema-go error the location and the
// keyword that failed, without the value: "validating root: validating
// /properties/pw: type: hunter2 has type …" becomes "/properties/pw: type".
func redactValidation(msg string) string {
	const marker = "validating "
	i := strings.LastIndex(msg, marker)
	if i < 0 {
		return "the result does not match"
	}
	rest := msg[i+len(marker):]
	j := strings.Index(rest, ": ")
	if j < 0 {
		return rest
	}
	keyword := rest[j+2:]
	if k := strings.IndexAny(keyword, ": "); k >= 0 {
		keyword = keyword[:k]
	}
	return rest[:j] + ": " + keyword
}

func excerptValue(v []byte) string {
	if len(v) > 40 {
		return string(v[:40]) + "…"
	}
	return string(v)
}
