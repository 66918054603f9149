package check

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/geilt/tairseach-mcp/internal/jsonscan"
	"github.com/geilt/tairseach-mcp/internal/quote"
)

// clientAddedArgs are arguments that clients add to every tool call on
// their own, whatever the tool's inputSchema says: Gemini CLI offers its
// model an optional wait_for_previous (run after the calls before it) and
// passes it on. Such an argument is dropped before the arguments are
// checked and forwarded, unless the tool's inputSchema declares it, on
// every path a call takes.
var clientAddedArgs = []string{"wait_for_previous"}

// Args returns the arguments of a call as they will be forwarded: {} for
// none, without the arguments clients add on their own, refused (with the
// reason) when they are not one JSON object, repeat a member name at any
// depth, or do not match in. A schema that does not compile leaves the
// arguments unchecked, and is returned.
func Args(in *Input, args json.RawMessage) (json.RawMessage, string, error) {
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	if key, dup := duplicateKey(args); dup {
		// encoding/json keeps the last, other readers the first: the check
		// and the backend could see different arguments.
		return nil, fmt.Sprintf("member %s appears more than once; send each argument once", quote.IdentLine(key, quote.Name)), nil
	}
	args = dropClientArgs(args, in.Declares)
	msg, err := in.Check(args)
	if msg != "" {
		return nil, msg, nil
	}
	return args, "", err
}

// dropClientArgs removes the top-level members named in clientAddedArgs
// that declared does not claim. args is not changed; the common case, none
// present, costs a byte search and no allocation.
func dropClientArgs(args json.RawMessage, declared func(string) bool) json.RawMessage {
	// A name may be written with escapes (wait\u005ffor_previous).
	present := false
	for _, name := range clientAddedArgs {
		if (bytes.Contains(args, []byte(name)) || bytes.Contains(args, []byte(`\u`))) && !declared(name) {
			present = true
		}
	}
	if !present {
		return args
	}
	out := make([]byte, 0, len(args))
	out = append(out, '{')
	err := jsonscan.Members(args, func(key, value []byte) bool {
		for _, name := range clientAddedArgs {
			if jsonscan.KeyIs(key, name) && !declared(name) {
				return true
			}
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, '"')
		out = append(out, key...)
		out = append(out, `":`...)
		out = append(out, value...)
		return true
	})
	if err != nil {
		return args // not an object: the check says so
	}
	return append(out, '}')
}

// duplicateKey reports the first member name that appears twice in one
// object of the JSON value b, at any depth, in one pass over b. Invalid
// JSON reports none: the argument check refuses it.
func duplicateKey(b []byte) (string, bool) {
	_, key, dup, _ := scanDup(b, 0, 0)
	return key, dup
}

var errNotJSON = errors.New("not JSON")

// scanDup walks the JSON value at b[i:] and returns the index just past it
// and the first repeated member name within it. Each byte is looked at
// once, whatever the nesting (at most jsonscan.MaxDepth).
func scanDup(b []byte, i, depth int) (end int, key string, dup bool, err error) {
	i = jsonscan.SkipSpace(b, i)
	if i >= len(b) || depth > jsonscan.MaxDepth {
		return i, "", false, errNotJSON
	}
	switch b[i] {
	case '[':
		i = jsonscan.SkipSpace(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1, "", false, nil
		}
		for {
			if i, key, dup, err = scanDup(b, i, depth+1); dup || err != nil {
				return i, key, dup, err
			}
			i = jsonscan.SkipSpace(b, i)
			switch {
			case i < len(b) && b[i] == ',':
				i++
			case i < len(b) && b[i] == ']':
				return i + 1, "", false, nil
			default:
				return i, "", false, errNotJSON
			}
		}
	case '{':
		var seen []string            // the names so far, while few
		var many map[string]struct{} // then these
		i = jsonscan.SkipSpace(b, i+1)
		if i < len(b) && b[i] == '}' {
			return i + 1, "", false, nil
		}
		for {
			if i >= len(b) || b[i] != '"' {
				return i, "", false, errNotJSON
			}
			kend, err := jsonscan.Skip(b, i)
			if err != nil {
				return i, "", false, err
			}
			name, err := jsonscan.Key(b[i+1 : kend-1])
			if err != nil {
				return i, "", false, err
			}
			switch {
			case many != nil:
				if _, ok := many[name]; ok {
					return i, name, true, nil
				}
				many[name] = struct{}{}
			case slices.Contains(seen, name):
				return i, name, true, nil
			default:
				if seen = append(seen, name); len(seen) > 16 {
					many = make(map[string]struct{}, 2*len(seen))
					for _, k := range seen {
						many[k] = struct{}{}
					}
				}
			}
			i = jsonscan.SkipSpace(b, kend)
			if i >= len(b) || b[i] != ':' {
				return i, "", false, errNotJSON
			}
			if i, key, dup, err = scanDup(b, i+1, depth+1); dup || err != nil {
				return i, key, dup, err
			}
			i = jsonscan.SkipSpace(b, i)
			switch {
			case i < len(b) && b[i] == ',':
				i = jsonscan.SkipSpace(b, i+1)
			case i < len(b) && b[i] == '}':
				return i + 1, "", false, nil
			default:
				return i, "", false, errNotJSON
			}
		}
	default:
		end, err := jsonscan.Skip(b, i)
		return end, "", false, err
	}
}
