package mcpserver

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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
// the toolsets (the manifests' ids, as words), and the tools' prefix. A
// client that defers tools behind its own search sees only the
// instructions and the names until it searches; the key words come first
// so that no cut loses them.
func (s *Server) keywordsFirst(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "initialize" && method != "server/discover" {
			return next(ctx, method, req)
		}
		s.ready.WaitAtMost(ctx, instructionsWait)
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		switch r := res.(type) {
		case *mcp.InitializeResult:
			cp := *r
			cp.Instructions = s.withKeywords(r.Instructions)
			res = &cp
		case *mcp.DiscoverResult:
			cp := *r
			cp.Instructions = s.withKeywords(r.Instructions)
			res = &cp
		}
		return res, err
	}
}

// withKeywords puts before rest the sentence that names the toolsets the
// server serves now, as many as fit within MaxInstructionsBytes; rest
// alone before the first registry.
func (s *Server) withKeywords(rest string) string {
	if !s.ready.IsOpen() {
		return rest
	}
	words := toolsetWords(s.routes.Load())
	if len(words) == 0 {
		return rest
	}
	const head = "Tairseach tools for the user's own Mac and accounts: "
	tail := ". Search these tools whenever the user asks about any of them. "
	if s.cfg.Prefix != "" {
		tail = ". Search these tools (named " + s.cfg.Prefix + "…) whenever the user asks about any of them. "
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
