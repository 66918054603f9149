// Package completion finds the values offered by completion/complete for a
// prompt argument or a resource template variable: from an enum the
// declaration lists, or from the reply of a read-only backend method. The
// prompts and resources packages use it to answer for their own references;
// a method is asked through the one pipeline (mcpserver/backend), as every
// request of the backend is.
package completion

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/internal/jsonscan"
	"github.com/geilt/tairseach-mcp/mcpserver/backend"
)

// MaxValues is the most values a completion returns, as the protocol asks.
const MaxValues = 100

// Timeout is how long a backend method may take to answer a completion.
const Timeout = time.Second

// Enum returns the values of enum that start with prefix (case-insensitive).
func Enum(enum []string, prefix string) []string {
	var out []string
	for _, v := range enum {
		if hasPrefixFold(v, prefix) {
			out = append(out, v)
		}
	}
	return out
}

// FromMethod asks the pipeline for r, a completion from a method, with params
// {"query": prefix}, and returns the values of its reply: the strings of
// an array (or of the object's first array member), or each element's
// "id", "name" or "title", each once. A refused, failing or slow request
// gives none, and so does a reply whose values take the rest of the
// budget to go through: the work is linear in the reply, which the size
// limit bounds.
func FromMethod(ctx context.Context, caller backend.Caller, r backend.Request, prefix string) []string {
	if caller == nil || r.Method == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	r.Kind = backend.Completion
	r.Params, _ = json.Marshal(map[string]string{"query": prefix})
	out, err := caller.Do(ctx, &r)
	if err != nil {
		return nil
	}
	// The method was given the text typed so far: its reply is taken as
	// the matches (a search matches names, yet offers ids).
	vals, ok := values(ctx, out)
	if !ok {
		return nil
	}
	return vals
}

// values extracts candidate strings from a reply, each once, in the order
// of their first appearance: an array, or the first array member of an
// object ({"contacts": [...]}, the members in the order of their names).
// One pass over the reply, without decoding what is not a value; it gives
// up (false) when ctx ends.
func values(ctx context.Context, reply json.RawMessage) ([]string, bool) {
	arr := bytes.TrimSpace(reply)
	if len(arr) > 0 && arr[0] == '{' {
		var first string
		arr = nil
		_ = jsonscan.Members(reply, func(key, value []byte) bool {
			k, err := jsonscan.Key(key)
			if err == nil && len(value) > 0 && value[0] == '[' && (arr == nil || k < first) {
				first, arr = k, value
			}
			return true
		})
	}
	if len(arr) == 0 || arr[0] != '[' {
		return nil, ctx.Err() == nil
	}
	var out []string
	seen := map[string]struct{}{}
	for n, i := 0, jsonscan.SkipSpace(arr, 1); i < len(arr) && arr[i] != ']'; n++ {
		if n%1024 == 0 && ctx.Err() != nil {
			return nil, false
		}
		end, err := jsonscan.Skip(arr, i)
		if err != nil {
			break
		}
		if s, ok := valueOf(arr[i:end]); ok {
			if _, dup := seen[s]; !dup {
				seen[s] = struct{}{}
				out = append(out, s)
			}
		}
		i = jsonscan.SkipSpace(arr, end)
		if i < len(arr) && arr[i] == ',' {
			i = jsonscan.SkipSpace(arr, i+1)
		}
	}
	return out, ctx.Err() == nil
}

// valueOf is the value an element offers: a string itself, an object its
// "id", "name" or "title" (the first a non-empty string, names matched as
// encoding/json matches a struct's fields).
func valueOf(el []byte) (string, bool) {
	switch el[0] {
	case '"':
		s, err := jsonscan.Key(el[1 : len(el)-1])
		return s, err == nil
	case '{':
	default:
		return "", false
	}
	var fields [3][]byte // id, name, title: the last of each name, as encoding/json keeps
	_ = jsonscan.Members(el, func(key, value []byte) bool {
		k, err := jsonscan.Key(key)
		if err != nil {
			return true
		}
		for i, name := range []string{"id", "name", "title"} {
			if strings.EqualFold(k, name) {
				fields[i] = value
			}
		}
		return true
	})
	for _, f := range fields {
		if len(f) > 1 && f[0] == '"' {
			if s, err := jsonscan.Key(f[1 : len(f)-1]); err == nil && s != "" {
				return s, true
			}
		}
	}
	return "", false
}

// Result makes the completion result of vals, cut to MaxValues.
func Result(vals []string) *mcp.CompleteResult {
	res := &mcp.CompleteResult{}
	res.Completion.Values = []string{}
	if len(vals) > MaxValues {
		res.Completion.Total = len(vals)
		res.Completion.HasMore = true
		vals = vals[:MaxValues]
	}
	res.Completion.Values = append(res.Completion.Values, vals...)
	return res
}

// Chain installs h as o's completion handler in front of the one already
// set: h answers the references it knows (ok), the previous one the rest.
func Chain(o *mcp.ServerOptions, h func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, bool)) {
	prev := o.CompletionHandler
	o.CompletionHandler = func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
		if res, ok := h(ctx, req); ok {
			return res, nil
		}
		if prev != nil {
			return prev(ctx, req)
		}
		return Result(nil), nil
	}
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
