package mcpserver

import (
	"iter"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// httpView is the Server as the HTTP transport (mcpserver/streamable)
// serves it: the header selections choose each request's go-sdk server.
type httpView struct{ *Server }

// Select gives each request to /mcp the face of its header selection.
func (h httpView) Select(next http.Handler) http.Handler { return h.sel.handler(next) }

// ServerFor is the go-sdk server of a request's face.
func (h httpView) ServerFor(r *http.Request) *mcp.Server { return h.sel.serverFor(r) }

// Sessions are the sessions of every face's go-sdk server.
func (h httpView) Sessions() iter.Seq[*mcp.ServerSession] { return h.allSessions() }

// CutOff closes the backend connections.
func (h httpView) CutOff() { _ = h.Close() }
