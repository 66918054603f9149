package check

import (
	"encoding/json"
	"math"
	"regexp"
	"unicode/utf8"
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
	"$comment": true, "deprecated": true, "readOnly": true, "writeOnly": true, "$schema": true,
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

// accepts reports whether v, as decoded by encoding/json into an any, is
// certainly valid.
func (q *quickCheck) accepts(v any) bool {
	if q.types != 0 && q.types&jsonTypeOf(v) == 0 {
		return false
	}
	if q.enum != nil && !q.inEnum(v) {
		return false
	}
	switch v := v.(type) {
	case float64:
		if q.minimum != nil && v < *q.minimum || q.maximum != nil && v > *q.maximum ||
			q.exclusiveMinimum != nil && v <= *q.exclusiveMinimum || q.exclusiveMaximum != nil && v >= *q.exclusiveMaximum {
			return false
		}
	case string:
		if q.minLength >= 0 || q.maxLength >= 0 {
			n := utf8.RuneCountInString(v)
			if q.minLength >= 0 && n < q.minLength || q.maxLength >= 0 && n > q.maxLength {
				return false
			}
		}
		if q.pattern != nil && !q.pattern.MatchString(v) {
			return false
		}
	case []any:
		if q.minItems >= 0 && len(v) < q.minItems || q.maxItems >= 0 && len(v) > q.maxItems {
			return false
		}
		if q.items != nil {
			for _, e := range v {
				if !q.items.accepts(e) {
					return false
				}
			}
		}
	case map[string]any:
		for _, name := range q.required {
			if _, ok := v[name]; !ok {
				return false
			}
		}
		for name, e := range v {
			p, ok := q.properties[name]
			switch {
			case ok:
				if !p.accepts(e) {
					return false
				}
			case q.closed:
				return false
			case q.additional != nil:
				if !q.additional.accepts(e) {
					return false
				}
			}
		}
	}
	return true
}

// jsonTypeOf returns the type bits v matches: an integral number is both an
// integer and a number.
func jsonTypeOf(v any) uint8 {
	switch v := v.(type) {
	case nil:
		return typeNull
	case bool:
		return typeBoolean
	case float64:
		if _, frac := math.Modf(v); frac == 0 {
			return typeInteger | typeNumber
		}
		return typeNumber
	case string:
		return typeString
	case []any:
		return typeArray
	case map[string]any:
		return typeObject
	}
	return 0
}

func (q *quickCheck) inEnum(v any) bool {
	for _, e := range q.enum {
		if e == v { // scalars of the same dynamic type compare by value
			return true
		}
	}
	return false
}
