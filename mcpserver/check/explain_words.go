package check

// The words of the argument check's messages: types, ranges, lengths and
// values as a person reads them, and a decoding error in the same words.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/geilt/tairseach-mcp/internal/quote"
)

// DescribeTypes says what JSON Schema types allow, in words: "an integer",
// "a string or null". The CLI says it the same way.
func DescribeTypes(types []string) string {
	names := make([]string, 0, len(types))
	for _, t := range types {
		if n, ok := typeNames[t]; ok {
			t = n
		}
		names = append(names, t)
	}
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// describeRange says "an integer ≥ 1", "a number > 0 and ≤ 100", "≥ 1".
func describeRange(s *jsonschema.Schema) string {
	var parts []string
	if s.Minimum != nil {
		parts = append(parts, "≥ "+formatNumber(*s.Minimum))
	}
	if s.ExclusiveMinimum != nil {
		parts = append(parts, "> "+formatNumber(*s.ExclusiveMinimum))
	}
	if s.Maximum != nil {
		parts = append(parts, "≤ "+formatNumber(*s.Maximum))
	}
	if s.ExclusiveMaximum != nil {
		parts = append(parts, "< "+formatNumber(*s.ExclusiveMaximum))
	}
	bounds := strings.Join(parts, " and ")
	switch types := typesOf(s); {
	case slices.Equal(types, []string{"integer"}):
		return "an integer " + bounds
	case slices.Equal(types, []string{"number"}):
		return "a number " + bounds
	}
	return bounds
}

// describeLength says "at least 1 character", "at most 5 items",
// "from 2 to 5 members".
func describeLength(lo, hi *int, unit string) string {
	switch {
	case lo != nil && hi != nil && *lo == *hi:
		return "exactly " + plural(*lo, unit)
	case lo != nil && hi != nil:
		return fmt.Sprintf("from %d to %s", *lo, plural(*hi, unit))
	case lo != nil:
		return "at least " + plural(*lo, unit)
	case hi != nil:
		return "at most " + plural(*hi, unit)
	}
	return ""
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.Itoa(n) + " " + unit + "s"
}

// describeValue shows a value given: JSON for scalars (a long string cut
// short, with what could hide in it escaped), the kind for arrays and
// objects.
func describeValue(v any) string {
	shown := v
	switch v := v.(type) {
	case []any:
		if len(v) == 0 {
			return "an empty array"
		}
		return "an array"
	case map[string]any:
		if len(v) == 0 {
			return "an empty object"
		}
		return "an object"
	case float64:
		return formatNumber(v)
	case string:
		const most = 60
		if utf8.RuneCountInString(v) > most {
			shown = string([]rune(v)[:most]) + "…"
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(shown) != nil {
		return quote.Escape(fmt.Sprint(shown))
	}
	// encoding/json writes a Hangul filler or a variation selector as it
	// is: "to" and "to\u3164" would read alike.
	return quote.Escape(strings.TrimSpace(buf.String()))
}

// describeName shows an argument's name that is not a plain one: quoted,
// every character outside ASCII escaped (quote.Ident), so that names that
// differ never read alike; a long one cut short.
func describeName(k string) string {
	const most = 60
	if utf8.RuneCountInString(k) <= most {
		return quote.IdentLine(k, 1<<20)
	}
	q := quote.IdentLine(string([]rune(k)[:most]), 1<<20)
	return q[:len(q)-1] + "…\""
}

// formatNumber writes f as JSON does: 1, 2.5, 1e+21.
func formatNumber(f float64) string {
	if b, err := json.Marshal(f); err == nil {
		return string(b)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// sameJSON reports whether two decoded JSON values are equal, numbers by
// value.
func sameJSON(a, b any) bool {
	switch a := a.(type) {
	case float64:
		bf, ok := b.(float64)
		return ok && a == bf
	case []any:
		bs, ok := b.([]any)
		return ok && slices.EqualFunc(a, bs, sameJSON)
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(a) != len(bm) {
			return false
		}
		for k, av := range a {
			bv, ok := bm[k]
			if !ok || !sameJSON(av, bv) {
				return false
			}
		}
		return true
	}
	return a == b
}

// DecodeProblem says in the words of the argument check what is wrong with
// arguments encoding/json could not decode into a Go value: "query must be
// a string; got a number" rather than "json: cannot unmarshal number into
// Go struct field .query of type string".
func DecodeProblem(err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return strings.TrimPrefix(err.Error(), "json: ")
	}
	got := te.Value
	switch {
	case strings.HasPrefix(got, "number "):
		got = strings.TrimPrefix(got, "number ")
	case got == "bool":
		got = "a boolean"
	case got == "array" || got == "object":
		got = "an " + got
	default:
		got = "a " + got
	}
	if te.Field == "" {
		return "arguments must be a JSON object; got " + got
	}
	want := "a value of another type"
	switch te.Type.Kind() {
	case reflect.String:
		want = "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		want = "an integer"
	case reflect.Float32, reflect.Float64:
		want = "a number"
	case reflect.Bool:
		want = "a boolean"
	case reflect.Slice, reflect.Array:
		want = "an array"
	case reflect.Map, reflect.Struct:
		want = "an object"
	}
	return te.Field + " must be " + want + "; got " + got
}

// typesOf is the types a schema allows, one or several.
func typesOf(s *jsonschema.Schema) []string {
	if s.Type != "" {
		return []string{s.Type}
	}
	return s.Types
}

// typeNames are the JSON types as a sentence names them.
var typeNames = map[string]string{"integer": "an integer", "number": "a number", "boolean": "a boolean",
	"array": "an array", "object": "an object", "null": "null", "string": "a string"}
