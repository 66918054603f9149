// Package completion finds the values offered by completion/complete for a
// prompt argument or a resource template variable: from an enum the
// declaration lists, or from the reply of a read-only backend method. The
// prompts and resources packages use it to answer for their own references;
// a method is asked through the one road (mcpserver/backend), as every
// request of the backend is.
package completion

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/mcpserver/backend"
)

// MaxValues is the most values a completion returns, as the protocol asks.
const MaxValues = 100

// Budget is how long a backend method may take to answer a completion.
const Budget = time.Second

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

// FromMethod asks the road for r, a completion from a method, with params
// {"query": prefix}, and returns the values of its reply: the strings of
// an array (or of the object's first array member), or each element's
// "id", "name" or "title". A refused, failing or slow request gives none.
func FromMethod(ctx context.Context, road backend.Road, r backend.Request, prefix string) []string {
	if road == nil || r.Method == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, Budget)
	defer cancel()
	r.Kind = backend.Completion
	r.Params, _ = json.Marshal(map[string]string{"query": prefix})
	out, err := road.Do(ctx, &r)
	if err != nil {
		return nil
	}
	// The method was given the text typed so far: its reply is taken as
	// the matches (a search matches names, yet offers ids).
	var vals []string
	for _, v := range values(out) {
		if !slices.Contains(vals, v) {
			vals = append(vals, v)
		}
	}
	return vals
}

// values extracts candidate strings from a reply: an array, or the first
// array member of an object ({"contacts": [...]}).
func values(reply json.RawMessage) []string {
	var arr []json.RawMessage
	if json.Unmarshal(reply, &arr) != nil {
		var obj map[string]json.RawMessage
		if json.Unmarshal(reply, &obj) != nil {
			return nil
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if json.Unmarshal(obj[k], &arr) == nil {
				break
			}
		}
	}
	var out []string
	for _, el := range arr {
		var s string
		if json.Unmarshal(el, &s) == nil {
			out = append(out, s)
			continue
		}
		var o struct{ ID, Name, Title json.RawMessage }
		if json.Unmarshal(el, &o) != nil {
			continue
		}
		for _, f := range []json.RawMessage{o.ID, o.Name, o.Title} {
			if json.Unmarshal(f, &s) == nil && s != "" {
				out = append(out, s)
				break
			}
		}
	}
	return out
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
