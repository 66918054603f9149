package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/manifest"
)

// A Feature adds what is not a tool (resources, prompts, completion) to
// each go-sdk server New makes: the server's own, and one per HTTP header
// selection. The packages mcpserver/resources and mcpserver/prompts
// provide them; they reach the backend through Server.CallMethod.
type Feature interface {
	// ServerOptions adjusts the go-sdk options before the server is made
	// (capabilities, subscribe and completion handlers).
	ServerOptions(*mcp.ServerOptions)
	// Attach registers onto m; hides is m's tool policy (Policy.Hides).
	Attach(m *mcp.Server, hides func(manifest.Tool) string)
}

// Media, if set in Config, may add a content block after the text of a tool
// result: method is the tool's socket method and text its compact JSON
// result. It returns the block, or nil and a sentence for the text saying
// why there is none ("" when the result has nothing to show).
type Media func(method string, text []byte) (mcp.Content, string)

// CallMethod calls a socket method on a backend ("" is the default
// socket) with the server's pooled connections, for features.
func (s *Server) CallMethod(ctx context.Context, socket, method string, params json.RawMessage) (json.RawMessage, error) {
	s.mu.Lock()
	c := s.client(socket)
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
	defer cancel()
	return c.Call(ctx, method, params)
}

// PingDefault reports whether the default socket accepts connections.
func (s *Server) PingDefault(ctx context.Context) error {
	s.mu.Lock()
	c := s.client("")
	s.mu.Unlock()
	return c.Ping(ctx)
}

// SocketPath is the default socket's path now.
func (s *Server) SocketPath() string {
	s.mu.Lock()
	c := s.client("")
	s.mu.Unlock()
	return c.Path()
}

// withMedia appends the block Media gives for a successful result.
func (s *Server) withMedia(r *route, text []byte, res *mcp.CallToolResult) *mcp.CallToolResult {
	if s.cfg.Media == nil || res.IsError {
		return res
	}
	block, why := s.cfg.Media(r.tool.Method, text)
	switch {
	case block != nil:
		res.Content = append(res.Content, block)
	case why != "":
		res.Content = append(res.Content, &mcp.TextContent{Text: why})
	}
	return res
}
