package check

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/geilt/tairseach-mcp/internal/quote"
)

// checkArgs validates args against schema and returns "" when they conform,
// else what is wrong, naming the argument.
func checkArgs(schema *jsonschema.Resolved, args json.RawMessage) string {
	v, msg := decodeArgs(args)
	if msg != "" {
		return msg
	}
	return validateArgs(schema, v)
}

// decodeArgs decodes arguments, which must be a JSON object, or says why
// they are not one.
func decodeArgs(args json.RawMessage) (any, string) {
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return nil, "not JSON: " + err.Error()
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, "arguments must be a JSON object"
	}
	return v, ""
}

// validateArgs checks decoded arguments against schema and says what is
// wrong in plain words (explain), or in jsonschema-go's where explain
// cannot tell.
func validateArgs(schema *jsonschema.Resolved, v any) string {
	if err := schema.Validate(v); err != nil {
		if msg := explain(schema.Schema(), v); msg != "" {
			return msg
		}
		return describeSchemaError(err)
	}
	return ""
}

// describeSchemaError rewrites jsonschema-go's "validating root: validating
// /properties/a/properties/b: type: …" into `argument "a.b": type: …`, for
// the schemas whose keywords explain leaves to jsonschema-go.
func describeSchemaError(err error) string {
	msg := err.Error()
	path := ""
	for {
		rest, ok := strings.CutPrefix(msg, "validating ")
		if !ok {
			break
		}
		p, after, ok := strings.Cut(rest, ": ")
		if !ok {
			break
		}
		if p != "root" {
			path = p
		}
		msg = after
	}
	msg = sortAdditional(msg)
	// A null reaches jsonschema-go as an invalid reflect.Value.
	msg = strings.ReplaceAll(msg, "<invalid reflect.Value>", "null")
	if field := schemaPathToField(path); field != "" {
		return "argument " + quote.IdentLine(field, quote.Text) + ": " + msg
	}
	return msg
}

// sortAdditional sorts the names in jsonschema-go's `unexpected additional
// properties ["b" "a"]`, which come in map order, so that the same arguments
// always get the same message.
func sortAdditional(msg string) string {
	const prefix = "unexpected additional properties ["
	list, ok := strings.CutPrefix(msg, prefix)
	if !ok || !strings.HasSuffix(list, "]") {
		return msg
	}
	list = strings.TrimSuffix(list, "]")
	var names []string
	for list != "" {
		q, err := strconv.QuotedPrefix(list)
		if err != nil {
			return msg
		}
		name, _ := strconv.Unquote(q)
		names = append(names, name)
		list = strings.TrimPrefix(list[len(q):], " ")
	}
	slices.Sort(names)
	for i, n := range names {
		names[i] = quote.IdentLine(n, quote.Name)
	}
	return "unexpected additional properties [" + strings.Join(names, " ") + "]"
}

// schemaPathToField turns a schema location such as
// /properties/a/items/properties/b into the argument path a[].b.
func schemaPathToField(p string) string {
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	var b strings.Builder
	for i := 0; i < len(parts); i++ {
		switch parts[i] {
		case "properties":
			if i+1 < len(parts) {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(parts[i+1])
				i++
			}
		case "items", "additionalProperties", "prefixItems":
			b.WriteString("[]")
		}
	}
	return b.String()
}
