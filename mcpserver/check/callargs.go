package check

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/geilt/tairseach-mcp/internal/jsonscan"
)

// clientAddedArgs are arguments that clients add to every tool call on
// their own, whatever the tool's inputSchema says: Gemini CLI offers its
// model an optional wait_for_previous (run after the calls before it) and
// passes it on. Such an argument is dropped before the arguments are
// checked and forwarded, unless the tool's inputSchema declares it, on
// every road a call takes.
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
		return nil, fmt.Sprintf("member %q appears more than once; send each argument once", key), nil
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
	present := false
	for _, name := range clientAddedArgs {
		if bytes.Contains(args, []byte(name)) && !declared(name) {
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
// object of the JSON value b, at any depth. Invalid JSON reports none: the
// argument check refuses it.
func duplicateKey(b []byte) (string, bool) {
	i := jsonscan.SkipSpace(b, 0)
	if i >= len(b) || (b[i] != '{' && b[i] != '[') {
		return "", false
	}
	key, dup, _ := dupIn(b[i:])
	return key, dup
}

// dupIn checks the object or array at the start of b.
func dupIn(b []byte) (string, bool, error) {
	if b[0] == '[' {
		i := jsonscan.SkipSpace(b, 1)
		for i < len(b) && b[i] != ']' {
			end, err := jsonscan.Skip(b, i)
			if err != nil {
				return "", false, err
			}
			if c := b[i]; c == '{' || c == '[' {
				if key, dup, err := dupIn(b[i:end]); dup || err != nil {
					return key, dup, err
				}
			}
			i = jsonscan.SkipSpace(b, end)
			if i < len(b) && b[i] == ',' {
				i = jsonscan.SkipSpace(b, i+1)
			}
		}
		return "", false, nil
	}
	var seen []string            // the names so far, while few
	var many map[string]struct{} // then these
	var found string
	var dup bool
	var inner error
	end, err := jsonscan.Skip(b, 0)
	if err != nil {
		return "", false, err
	}
	err = jsonscan.Members(b[:end], func(raw, value []byte) bool {
		key, err := jsonscan.Key(raw)
		if err != nil {
			inner = err
			return false
		}
		if many != nil {
			if _, ok := many[key]; ok {
				found, dup = key, true
				return false
			}
			many[key] = struct{}{}
		} else if slices.Contains(seen, key) {
			found, dup = key, true
			return false
		} else if seen = append(seen, key); len(seen) > 16 {
			many = make(map[string]struct{}, 2*len(seen))
			for _, k := range seen {
				many[k] = struct{}{}
			}
		}
		if c := value[0]; c == '{' || c == '[' {
			found, dup, inner = dupIn(value)
			return !dup && inner == nil
		}
		return true
	})
	if inner != nil {
		err = inner
	}
	return found, dup, err
}
