package check

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"unicode/utf8"

	"github.com/geilt/tairseach-mcp/internal/jsonscan"
)

// quickCheck accepts arguments that an inputSchema certainly accepts, in a
// fraction of the time jsonschema-go takes: it understands the keywords
// Tairseach's manifests use (type, enum, const, properties, required,
// additionalProperties, items, numeric bounds, string length and pattern,
// array length) with jsonschema-go's semantics, and a schema with any other
// keyword gets no quickCheck. It only ever says yes or "not sure": the
// arguments it does not accept go to jsonschema-go, which gives the verdict
// and the message, so the two can never disagree on what is valid.
type quickCheck struct {
	types uint8 // allowed JSON types (typeBits); 0 allows any
	enum  []any // nil: no enum; scalars only (string, float64, bool, nil)

	minimum, maximum, exclusiveMinimum, exclusiveMaximum *float64

	minLength, maxLength int // -1: none
	pattern              *regexp.Regexp

	minItems, maxItems int // -1: none
	items              *quickCheck

	properties map[string]*quickCheck
	required   []string
	additional *quickCheck // schema for other properties; nil allows any
	closed     bool        // additionalProperties: false
}

const (
	typeNull uint8 = 1 << iota
	typeBoolean
	typeInteger
	typeNumber // also allows integers, as in JSON Schema
	typeString
	typeArray
	typeObject
)

var typeBits = map[string]uint8{
	"null": typeNull, "boolean": typeBoolean, "integer": typeInteger, "number": typeNumber,
	"string": typeString, "array": typeArray, "object": typeObject,
}

// annotations are keywords that never change whether a value is valid
// (jsonschema-go does not assert "format").
var annotations = map[string]bool{
	"description": true, "title": true, "default": true, "examples": true, "format": true,
	"$comment": true, "deprecated": true, "readOnly": true, "writeOnly": true,
}

// newQuickCheck compiles schema, or returns nil if it uses keywords or
// values the quick check does not handle.
func newQuickCheck(schema json.RawMessage) *quickCheck {
	var m map[string]json.RawMessage
	if json.Unmarshal(schema, &m) != nil {
		return nil
	}
	q := &quickCheck{minLength: -1, maxLength: -1, minItems: -1, maxItems: -1}
	for k, v := range m {
		if annotations[k] {
			continue
		}
		if !q.set(k, v) {
			return nil
		}
	}
	return q
}

// set compiles keyword k with value v into q, and reports whether it could.
func (q *quickCheck) set(k string, v json.RawMessage) bool {
	number := func(p **float64) bool {
		var f float64
		if json.Unmarshal(v, &f) != nil {
			return false
		}
		*p = &f
		return true
	}
	count := func(p *int) bool {
		var n int
		if json.Unmarshal(v, &n) != nil || n < 0 {
			return false
		}
		*p = n
		return true
	}
	switch k {
	case "type":
		var one string
		var many []string
		if json.Unmarshal(v, &one) == nil {
			many = []string{one}
		} else if json.Unmarshal(v, &many) != nil || len(many) == 0 {
			return false
		}
		for _, t := range many {
			bit, ok := typeBits[t]
			if !ok {
				return false
			}
			q.types |= bit
		}
	case "enum", "const":
		var vals []any
		if k == "const" {
			var c any
			if json.Unmarshal(v, &c) != nil {
				return false
			}
			vals = []any{c}
		} else if json.Unmarshal(v, &vals) != nil || vals == nil {
			return false
		}
		for _, e := range vals {
			switch e.(type) {
			case string, float64, bool, nil:
			default:
				return false // objects and arrays: leave to jsonschema-go
			}
		}
		if q.enum != nil { // both enum and const
			return false
		}
		q.enum = vals
	case "minimum":
		return number(&q.minimum)
	case "maximum":
		return number(&q.maximum)
	case "exclusiveMinimum":
		return number(&q.exclusiveMinimum)
	case "exclusiveMaximum":
		return number(&q.exclusiveMaximum)
	case "minLength":
		return count(&q.minLength)
	case "maxLength":
		return count(&q.maxLength)
	case "minItems":
		return count(&q.minItems)
	case "maxItems":
		return count(&q.maxItems)
	case "$schema":
		// jsonschema-go's Validate refuses every instance under any other.
		var sv string
		return json.Unmarshal(v, &sv) == nil && (sv == "" || sv == "http://json-schema.org/draft-07/schema#" ||
			sv == "https://json-schema.org/draft-07/schema#" || sv == "https://json-schema.org/draft/2020-12/schema")
	case "pattern":
		var p string
		if json.Unmarshal(v, &p) != nil {
			return false
		}
		re, err := regexp.Compile(p) // as jsonschema-go does
		if err != nil {
			return false
		}
		q.pattern = re
	case "items":
		if q.items = newQuickCheck(v); q.items == nil {
			return false // also an array of schemas (draft-07 tuples)
		}
	case "properties":
		var props map[string]json.RawMessage
		if json.Unmarshal(v, &props) != nil || props == nil {
			return false
		}
		q.properties = make(map[string]*quickCheck, len(props))
		for name, s := range props {
			if q.properties[name] = newQuickCheck(s); q.properties[name] == nil {
				return false
			}
		}
	case "required":
		if json.Unmarshal(v, &q.required) != nil {
			return false
		}
	case "additionalProperties":
		var b bool
		if json.Unmarshal(v, &b) == nil {
			q.closed = !b
			return true
		}
		if q.additional = newQuickCheck(v); q.additional == nil {
			return false
		}
	default:
		return false
	}
	return true
}

// accepts reports whether the JSON value b is certainly valid. It reads b
// as encoding/json would decode it into an any (numbers as float64,
// strings unescaped, bytes that are not UTF-8 as U+FFFD), without decoding
// it: no allocation for the usual arguments. Invalid JSON is never accepted
// (the full check then says what is wrong with it), and neither is an
// object that repeats a member name with different verdicts.
func (q *quickCheck) accepts(b []byte) bool {
	i := jsonscan.SkipSpace(b, 0)
	if i >= len(b) {
		return false
	}
	c := b[i]
	kind := typeBits[jsonscan.Kind(b[i:])]
	var num float64
	if kind == typeNumber {
		end, err := jsonscan.Skip(b, i)
		if err != nil || jsonscan.SkipSpace(b, end) != len(b) {
			return false
		}
		f, err := strconv.ParseFloat(string(b[i:end]), 64) // as encoding/json does
		if err != nil {
			return false
		}
		num = f
		if _, frac := math.Modf(f); frac == 0 {
			kind |= typeInteger
		}
	}
	if q.types != 0 && q.types&kind == 0 {
		return false
	}
	switch kind {
	case typeNull, typeBoolean:
		if end, err := jsonscan.Skip(b, i); err != nil || jsonscan.SkipSpace(b, end) != len(b) {
			return false
		}
		if q.enum != nil {
			var v any
			if c != 'n' {
				v = c == 't'
			}
			return q.inEnum(v)
		}
	case typeString:
		return q.acceptsString(b[i:])
	case typeArray:
		return q.acceptsArray(b[i:])
	case typeObject:
		return q.acceptsObject(b[i:])
	default: // a number
		if q.enum != nil && !q.inEnum(num) {
			return false
		}
		if q.minimum != nil && num < *q.minimum || q.maximum != nil && num > *q.maximum ||
			q.exclusiveMinimum != nil && num <= *q.exclusiveMinimum || q.exclusiveMaximum != nil && num >= *q.exclusiveMaximum {
			return false
		}
	}
	return true
}

// acceptsArgs reports whether the arguments b, which must be one JSON
// object, are certainly valid.
func (q *quickCheck) acceptsArgs(b []byte) bool {
	return jsonscan.Kind(b) == "object" && numbersFit(b) && q.accepts(b)
}

// numbersFit reports whether every number in the JSON text b fits a
// float64, as encoding/json requires of a number it decodes into an any,
// wherever the schema leaves it unchecked. Only a number with an exponent
// or of more than 15 characters can overflow.
func numbersFit(b []byte) bool {
	for i := 0; i < len(b); {
		switch c := b[i]; {
		case c == '"':
			end, err := jsonscan.Skip(b, i)
			if err != nil {
				return false
			}
			i = end
		case c == '-' || c >= '0' && c <= '9':
			start, long := i, false
			for i < len(b) && (b[i] >= '0' && b[i] <= '9' || b[i] == '-' || b[i] == '+' || b[i] == '.' || b[i] == 'e' || b[i] == 'E') {
				long = long || b[i] == 'e' || b[i] == 'E'
				i++
			}
			if long || i-start > 15 {
				if _, err := strconv.ParseFloat(string(b[start:i]), 64); err != nil {
					return false
				}
			}
		default:
			i++
		}
	}
	return true
}

// acceptsString checks the JSON string b (white space after it at most).
func (q *quickCheck) acceptsString(b []byte) bool {
	end, err := jsonscan.Skip(b, 0)
	if err != nil || jsonscan.SkipSpace(b, end) != len(b) {
		return false
	}
	text := b[1 : end-1]
	if bytes.IndexByte(text, '\\') >= 0 || !utf8.Valid(text) {
		var s string // escapes or bytes encoding/json replaces: let it decode
		if json.Unmarshal(b[:end], &s) != nil {
			return false
		}
		text = []byte(s)
	}
	if q.enum != nil && !q.inEnumString(text) {
		return false
	}
	if q.minLength >= 0 || q.maxLength >= 0 {
		n := utf8.RuneCount(text)
		if q.minLength >= 0 && n < q.minLength || q.maxLength >= 0 && n > q.maxLength {
			return false
		}
	}
	return q.pattern == nil || q.pattern.Match(text)
}

// acceptsArray checks the JSON array b (white space after it at most).
func (q *quickCheck) acceptsArray(b []byte) bool {
	if q.enum != nil {
		return false // enums hold scalars only
	}
	n := 0
	i := jsonscan.SkipSpace(b, 1)
	if i < len(b) && b[i] == ']' {
		i++
	} else {
		for {
			end, err := jsonscan.Skip(b, i)
			if err != nil {
				return false
			}
			if q.items != nil && !q.items.accepts(b[i:end]) {
				return false
			}
			n++
			i = jsonscan.SkipSpace(b, end)
			if i < len(b) && b[i] == ',' {
				i = jsonscan.SkipSpace(b, i+1)
				continue
			}
			if i < len(b) && b[i] == ']' {
				i++
				break
			}
			return false
		}
	}
	if jsonscan.SkipSpace(b, i) != len(b) {
		return false
	}
	return (q.minItems < 0 || n >= q.minItems) && (q.maxItems < 0 || n <= q.maxItems)
}

// acceptsObject checks the JSON object b.
func (q *quickCheck) acceptsObject(b []byte) bool {
	if q.enum != nil || len(q.required) > 64 {
		return false
	}
	var found uint64 // bit i: required[i] is present
	ok := true
	err := jsonscan.Members(b, func(rawKey, value []byte) bool {
		key := rawKey
		if bytes.IndexByte(rawKey, '\\') >= 0 || !utf8.Valid(rawKey) {
			s, err := jsonscan.Key(rawKey)
			if err != nil {
				ok = false
				return false
			}
			key = []byte(s)
		}
		for i, name := range q.required {
			if name == string(key) {
				found |= 1 << i
			}
		}
		p, declared := q.properties[string(key)]
		switch {
		case declared:
			ok = p.accepts(value)
		case q.closed:
			ok = false
		case q.additional != nil:
			ok = q.additional.accepts(value)
		}
		return ok
	})
	return err == nil && ok && found == 1<<len(q.required)-1
}

func (q *quickCheck) inEnum(v any) bool {
	for _, e := range q.enum {
		if e == v { // scalars of the same dynamic type compare by value
			return true
		}
	}
	return false
}

func (q *quickCheck) inEnumString(text []byte) bool {
	for _, e := range q.enum {
		if s, ok := e.(string); ok && s == string(text) {
			return true
		}
	}
	return false
}
