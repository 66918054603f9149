package mcpserver

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/internal/quote"
	"github.com/geilt/tairseach-mcp/mcpserver/internal/gate"
	"github.com/geilt/tairseach-mcp/mcpserver/policy"
	"github.com/geilt/tairseach-mcp/mcpserver/routes"
)

// MaxInstructionsBytes is the most of a server's instructions Claude Code
// keeps: it cuts them at 2 KB, and reads them to decide when to search for
// the server's tools, which it defers. The instructions of initialize and
// server/discover stay within it.
const MaxInstructionsBytes = 2048

// instructionsWait bounds how long initialize and server/discover wait for
// the manifests' first load, whose capabilities the instructions name
// first. Reading the app's 23 manifests takes about 20 ms, and a client
// sends initialize as soon as it has started the server.
const instructionsWait = time.Second

// keywordsFirst is the receiving middleware that begins the instructions
// of initialize and server/discover with what the tools served are about:
// the toolsets (the manifests' ids, as words) of the route table t, and the
// tools' prefix. A client that defers tools behind its own search sees only
// the instructions and the names until it searches; the key words come
// first so that no cut loses them.
func keywordsFirst(ready *gate.Gate, t *atomic.Pointer[routes.Table], prefix string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "initialize" && method != "server/discover" {
				return next(ctx, method, req)
			}
			ready.WaitAtMost(ctx, instructionsWait)
			res, err := next(ctx, method, req)
			if err != nil || !ready.IsOpen() {
				// Before the first registry, the rest alone.
				return res, err
			}
			table := t.Load()
			return withInstructions(res, func(rest string) string { return withKeywords(table, prefix, rest) }), nil
		}
	}
}

// withInstructions returns res with its instructions rewritten by edit
// when res is the result of initialize or server/discover; else res.
func withInstructions(res mcp.Result, edit func(string) string) mcp.Result {
	switch r := res.(type) {
	case *mcp.InitializeResult:
		cp := *r
		cp.Instructions = edit(r.Instructions)
		return &cp
	case *mcp.DiscoverResult:
		cp := *r
		cp.Instructions = edit(r.Instructions)
		return &cp
	}
	return res
}

// withKeywords puts before rest the sentence that names the toolsets t
// serves, as many as fit within MaxInstructionsBytes.
func withKeywords(t *routes.Table, prefix, rest string) string {
	words := toolsetWords(t)
	if len(words) == 0 {
		return rest
	}
	const head = "Tairseach tools for the user's own Mac and accounts: "
	tail := ". Search these tools whenever the user asks about any of them. "
	if prefix != "" {
		tail = ". Search these tools (named " + prefix + "…) whenever the user asks about any of them. "
	}
	const more = ", and more"
	budget := MaxInstructionsBytes - len(head) - len(tail) - len(rest)
	var list strings.Builder
	for i, w := range words {
		sep := ""
		if i > 0 {
			sep = ", "
		}
		left := budget - list.Len()
		if i < len(words)-1 {
			left -= len(more) // room to say the list goes on
		}
		if len(sep)+len(w) > left {
			if i == 0 {
				return rest
			}
			list.WriteString(more)
			break
		}
		list.WriteString(sep + w)
	}
	return head + list.String() + tail + rest
}

// toolsetWords are the toolsets of the tools t serves, as words ("-" and
// "_" as spaces), sorted, without duplicates.
func toolsetWords(t *routes.Table) []string {
	var words []string
	for _, name := range t.Order {
		r, ok := t.ByName[name]
		if !ok {
			continue
		}
		w := strings.Join(strings.FieldsFunc(policy.ToolsetOf(r.Tool), func(c rune) bool { return c == '-' || c == '_' }), " ")
		if w != "" && !slices.Contains(words, w) {
			words = append(words, w)
		}
	}
	slices.Sort(words)
	return words
}

// unavailable is the line the instructions of initialize add when t
// leaves tools out for permissions, or "".
func unavailable(t *routes.Table) string {
	by := map[string][]string{}
	for _, h := range t.Blocked {
		k := quote.Line(h.Perm, quote.Name) + " (" + string(h.Status) + ")"
		by[k] = append(by[k], h.Name)
	}
	if len(by) == 0 {
		return ""
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(by)) {
		tools := "tools"
		if len(by[k]) == 1 {
			tools = "tool"
		}
		parts = append(parts, fmt.Sprintf("%s: %d %s", k, len(by[k]), tools))
	}
	return " Some capabilities are unavailable because macOS has not granted Tairseach the permission they need, so their tools are not offered: " +
		strings.Join(parts, "; ") + ". If the user asks for one, tell them which permission it needs: they can give it in the Tairseach app's Permissions view, or in System Settings › Privacy & Security."
}
