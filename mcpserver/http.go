package mcpserver

import (
	"iter"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/mcpserver/streamable"
)

// httpView is the Server as the HTTP transport (mcpserver/streamable)
// serves it: the header selections choose each request's go-sdk server,
// in one step (selections.choose).
type httpView struct{ *Server }

// Choose gives a request to /mcp the go-sdk server of its policy: its
// header selection's policy server, or the base one.
func (h httpView) Choose(r *http.Request) (streamable.Choice, *streamable.Refusal) {
	return h.sel.choose(r)
}

// Sessions are the sessions of every policy server's go-sdk server.
func (h httpView) Sessions() iter.Seq[*mcp.ServerSession] { return h.allSessions() }

// CutOff closes the backend connections.
func (h httpView) CutOff() { _ = h.Close() }
