package check

import (
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/geilt/tairseach-mcp/internal/quote"
)

// jsonschema-go says what is wrong in its own terms ("minimum: 0/1 is less
// than 1.000000", "type: <invalid reflect.Value> has type \"null\"…") and
// only names the schema location, not the value's. Once it has refused the
// arguments, explain walks the schema beside them for the keyword that
// fails and says it in words a caller can act on, naming the argument, the
// rule and the value given: "limit must be an integer ≥ 1; got 0". It
// understands the keywords manifests use; where it meets one it does not,
// the library's message is kept.

// problem is one thing wrong with the arguments.
type problem struct {
	path  string   // the argument: limit, filter.tags[2]; "" for the arguments object
	rule  string   // what it must be: "must be an integer ≥ 1"
	got   string   // what was given: "0", or "" when the rule says it all
	whole string   // a message that names the argument itself, instead of path+rule+got
	types []string // set when the problem is the value's type: the types allowed
}

func (p *problem) String() string {
	if p.whole != "" {
		return p.whole
	}
	name := p.path
	if name == "" {
		name = "the arguments"
	}
	msg := name + " " + p.rule
	if p.got != "" {
		msg += "; got " + p.got
	}
	return msg
}

// explain returns the first problem it finds with v against the schema
// root, or "" when it finds none it can name.
func explain(root *jsonschema.Schema, v any) string {
	e := explainer{root: root}
	if p, _ := e.walk("", root, v, 0); p != nil {
		return p.String()
	}
	return ""
}

type explainer struct {
	root *jsonschema.Schema
}

// maxExplainDepth bounds the walk through $refs that refer to themselves.
const maxExplainDepth = 64

// walk returns the first problem of v against s, at argument path. When it
// finds none, unsure reports whether s uses a keyword walk does not
// understand, so that v may still fail it.
func (e *explainer) walk(path string, s *jsonschema.Schema, v any, depth int) (p *problem, unsure bool) {
	if s == nil {
		return nil, false
	}
	if depth > maxExplainDepth {
		return nil, true
	}
	if s.Ref != "" {
		target := e.ref(s.Ref)
		if target == nil {
			return nil, true
		}
		if p, unsure = e.walk(path, target, v, depth+1); p != nil {
			return p, false
		}
		if e.root.Schema == "http://json-schema.org/draft-07/schema#" || e.root.Schema == "https://json-schema.org/draft-07/schema#" {
			return nil, unsure // draft-07 ignores the keywords beside $ref
		}
	}
	if s.Not != nil && isFalse(s.Not) {
		return &problem{path: path, whole: "argument " + quoteName(path) + " is not allowed"}, false
	}
	if p := checkType(path, s, v); p != nil {
		return p, false
	}
	if p := checkValue(path, s, v); p != nil {
		return p, false
	}
	unsure = unsure || s.DynamicRef != "" || s.If != nil || s.Not != nil || s.UnevaluatedItems != nil ||
		s.UnevaluatedProperties != nil || s.Contains != nil
	for _, sub := range s.AllOf {
		p, u := e.walk(path, sub, v, depth+1)
		if p != nil {
			return p, false
		}
		unsure = unsure || u
	}
	if len(s.AnyOf) > 0 || len(s.OneOf) > 0 {
		p, u := e.alternatives(path, s, v, depth)
		if p != nil {
			return p, false
		}
		unsure = unsure || u
	}
	var u bool
	switch v := v.(type) {
	case []any:
		p, u = e.array(path, s, v, depth)
	case map[string]any:
		p, u = e.object(path, s, v, depth)
	}
	if p != nil {
		return p, false
	}
	return nil, unsure || u
}

// ref finds a $ref within the schema itself: #, #/$defs/NAME,
// #/definitions/NAME. Others are left to jsonschema-go.
func (e *explainer) ref(ref string) *jsonschema.Schema {
	switch {
	case ref == "#":
		return e.root
	case strings.HasPrefix(ref, "#/$defs/"):
		return e.root.Defs[strings.TrimPrefix(ref, "#/$defs/")]
	case strings.HasPrefix(ref, "#/definitions/"):
		return e.root.Definitions[strings.TrimPrefix(ref, "#/definitions/")]
	}
	return nil
}

// isFalse reports whether s is the schema false, as jsonschema-go reads it
// ({"not": {}}).
func isFalse(s *jsonschema.Schema) bool {
	return s.Not != nil && reflect.ValueOf(*s.Not).IsZero()
}

// typeOf is the JSON Schema type of a decoded JSON value; a whole number is
// an "integer", as jsonschema-go has it.
func typeOf(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		if _, frac := math.Modf(v); frac == 0 {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return ""
}

func checkType(path string, s *jsonschema.Schema, v any) *problem {
	types := typesOf(s)
	if len(types) == 0 {
		return nil
	}
	got := typeOf(v)
	if slices.Contains(types, got) || got == "integer" && slices.Contains(types, "number") {
		return nil
	}
	return &problem{path: path, rule: "must be " + DescribeTypes(types), got: describeValue(v), types: types}
}

// checkValue checks the keywords on a value itself: enum, const, numbers
// and strings.
func checkValue(path string, s *jsonschema.Schema, v any) *problem {
	if s.Enum != nil && !slices.ContainsFunc(s.Enum, func(e any) bool { return sameJSON(e, v) }) {
		vals := make([]string, 0, len(s.Enum))
		for i, e := range s.Enum {
			if i == 20 {
				vals = append(vals, "…")
				break
			}
			vals = append(vals, describeValue(e))
		}
		return &problem{path: path, rule: "must be one of " + strings.Join(vals, ", "), got: describeValue(v)}
	}
	if s.Const != nil && !sameJSON(*s.Const, v) {
		return &problem{path: path, rule: "must be " + describeValue(*s.Const), got: describeValue(v)}
	}
	switch v := v.(type) {
	case float64:
		if m := s.MultipleOf; m != nil {
			if _, frac := math.Modf(v / *m); frac != 0 {
				return &problem{path: path, rule: "must be a multiple of " + formatNumber(*m), got: formatNumber(v)}
			}
		}
		if s.Minimum != nil && v < *s.Minimum || s.Maximum != nil && v > *s.Maximum ||
			s.ExclusiveMinimum != nil && v <= *s.ExclusiveMinimum || s.ExclusiveMaximum != nil && v >= *s.ExclusiveMaximum {
			return &problem{path: path, rule: "must be " + describeRange(s), got: formatNumber(v)}
		}
	case string:
		n := utf8.RuneCountInString(v)
		if s.MinLength != nil && n < *s.MinLength || s.MaxLength != nil && n > *s.MaxLength {
			got := describeValue(v)
			if n > 1 {
				got += fmt.Sprintf(" (%d characters)", n)
			}
			return &problem{path: path, rule: "must be " + describeLength(s.MinLength, s.MaxLength, "character") + " long", got: got}
		}
		if s.Pattern != "" {
			if re, err := regexp.Compile(s.Pattern); err == nil && !re.MatchString(v) {
				return &problem{path: path, rule: `must match the pattern "` + quote.Escape(s.Pattern) + `"`, got: describeValue(v)}
			}
		}
	}
	return nil
}

// alternatives checks anyOf and oneOf. When every alternative refuses v,
// it names the types they allow if that is what they differ on, else the
// problem of the first alternative whose type v has.
func (e *explainer) alternatives(path string, s *jsonschema.Schema, v any, depth int) (*problem, bool) {
	unsure := false
	for _, alt := range []struct {
		list  []*jsonschema.Schema
		oneOf bool
	}{{s.AnyOf, false}, {s.OneOf, true}} {
		if len(alt.list) == 0 {
			continue
		}
		var types []string
		var deeper *problem // the problem of an alternative whose type v has
		matched, doubtful := 0, false
		for _, sub := range alt.list {
			p, u := e.walk(path, sub, v, depth+1)
			switch {
			case p == nil && u:
				doubtful = true
			case p == nil:
				matched++
			case p.types != nil && p.path == path:
				for _, t := range p.types {
					if !slices.Contains(types, t) {
						types = append(types, t)
					}
				}
			case deeper == nil:
				deeper = p
			}
		}
		switch {
		case doubtful:
			unsure = true
		case matched == 0 && deeper != nil:
			return deeper, false
		case matched == 0 && len(types) > 0:
			return &problem{path: path, rule: "must be " + DescribeTypes(types), got: describeValue(v), types: types}, false
		case matched > 1 && alt.oneOf:
			return &problem{path: path, rule: fmt.Sprintf("must match exactly one of the %d forms the schema allows (oneOf), not %d", len(alt.list), matched), got: describeValue(v)}, false
		}
	}
	return nil, unsure
}

func (e *explainer) array(path string, s *jsonschema.Schema, v []any, depth int) (*problem, bool) {
	unsure := false
	for i, item := range v {
		var sub *jsonschema.Schema
		switch {
		case s.ItemsArray != nil && i < len(s.ItemsArray):
			sub = s.ItemsArray[i]
		case s.ItemsArray != nil:
			sub = s.AdditionalItems
		case i < len(s.PrefixItems):
			sub = s.PrefixItems[i]
		default:
			sub = s.Items
		}
		p, u := e.walk(fmt.Sprintf("%s[%d]", path, i), sub, item, depth+1)
		if p != nil {
			return p, false
		}
		unsure = unsure || u
	}
	if s.MinItems != nil && len(v) < *s.MinItems || s.MaxItems != nil && len(v) > *s.MaxItems {
		return &problem{path: path, rule: "must have " + describeLength(s.MinItems, s.MaxItems, "item"), got: plural(len(v), "item")}, false
	}
	if s.UniqueItems {
		for i := range v {
			for j := range i {
				if sameJSON(v[i], v[j]) {
					return &problem{path: path, rule: "must not repeat an item", got: fmt.Sprintf("%s twice (items %d and %d)", describeValue(v[i]), j, i)}, false
				}
			}
		}
	}
	return nil, unsure
}

func (e *explainer) object(path string, s *jsonschema.Schema, v map[string]any, depth int) (*problem, bool) {
	if len(s.PatternProperties) > 0 || s.PropertyNames != nil || len(s.DependentSchemas) > 0 || len(s.DependencySchemas) > 0 {
		return nil, true
	}
	unsure := false
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range v {
			if !yield(k) {
				return
			}
		}
	})
	var extra []string
	for _, k := range names {
		sub, declared := s.Properties[k]
		if !declared {
			if s.AdditionalProperties == nil {
				continue
			}
			if isFalse(s.AdditionalProperties) {
				extra = append(extra, quoteName(join(path, k)))
				continue
			}
			sub = s.AdditionalProperties
		}
		p, u := e.walk(join(path, k), sub, v[k], depth+1)
		if p != nil {
			return p, false
		}
		unsure = unsure || u
	}
	if len(extra) > 0 {
		what := "unexpected argument "
		if len(extra) > 1 {
			what = "unexpected arguments "
		}
		return &problem{path: path, whole: what + strings.Join(extra, ", ")}, false
	}
	if s.MinProperties != nil && len(v) < *s.MinProperties || s.MaxProperties != nil && len(v) > *s.MaxProperties {
		return &problem{path: path, rule: "must have " + describeLength(s.MinProperties, s.MaxProperties, "member"), got: plural(len(v), "member")}, false
	}
	if p := missing(path, s.Required, v, ""); p != nil {
		return p, false
	}
	deps := s.DependentRequired
	if deps == nil {
		deps = s.DependencyStrings
	}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range deps {
			if !yield(k) {
				return
			}
		}
	}) {
		if _, ok := v[k]; ok {
			if p := missing(path, deps[k], v, " (given with "+quoteName(join(path, k))+")"); p != nil {
				return p, false
			}
		}
	}
	return nil, unsure
}

// missing names the members of required that v lacks.
func missing(path string, required []string, v map[string]any, why string) *problem {
	var lack []string
	for _, k := range required {
		if _, ok := v[k]; !ok {
			lack = append(lack, quoteName(join(path, k)))
		}
	}
	switch len(lack) {
	case 0:
		return nil
	case 1:
		return &problem{path: path, whole: "missing required argument " + lack[0] + why}
	}
	return &problem{path: path, whole: "missing required arguments " + strings.Join(lack, ", ") + why}
}

// join is the path of member k of the value at path: a.b, or a["b c"]
// where k is not a plain name.
func join(path, k string) string {
	switch {
	case !plainName(k) && path == "":
		return describeName(k)
	case !plainName(k):
		return path + "[" + describeName(k) + "]"
	case path == "":
		return k
	}
	return path + "." + k
}

func plainName(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '$') {
			return false
		}
	}
	return true
}

// quoteName quotes an argument path, unless it has quoted parts already.
func quoteName(path string) string {
	if strings.Contains(path, `"`) {
		return path
	}
	return `"` + path + `"`
}
