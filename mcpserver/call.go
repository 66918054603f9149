package mcpserver

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/mcpserver/observe"
	"github.com/geilt/tairseach-mcp/mcpserver/stdio"
)

// calls runs the pipeline every tools/call goes through. It reads the
// Server's route table and owns what only calls use: the slots of calls in
// flight, the observer, the confirmations asked, the background checks of
// results.
type calls struct {
	cfg      *Config
	log      zerolog.Logger
	routes   *atomic.Pointer[routeTable]
	ready    <-chan struct{}
	slots    chan struct{} // one token per call in flight
	obs      observe.Observer
	confirms *confirmations // the input requests asked of 2026-07-28 clients
	checks   checker        // checks results against unadvertised outputSchemas
	warned   sync.Map       // tool name → struct{}: its result mismatch was logged
}

// newProtocol is the revision whose requests carry their client in _meta
// and whose input requests the client answers by calling again.
const newProtocol = stdio.NewProtocol

// ToolCall is one tools/call, whichever road it came by: the go-sdk's tool
// handler, its receiving middleware (tools the go-sdk does not list), the
// stdio transport's direct path, or the CLI. Entry points only fill it in;
// Server.run applies every rule, in one order, to all of them.
type ToolCall struct {
	Name string           // the tool asked for: a manifest tool or a discovery tool
	Args json.RawMessage  // the arguments as the client sent them; empty or null: {}
	Info observe.CallInfo // who asked, for the audit log and the traces
	// ProgressToken is the request's _meta.progressToken; nil when the
	// client asked for no progress.
	ProgressToken any
	// Peer is the client's session, to report progress on and to ask the
	// user through; nil when there is none to reach (the CLI).
	Peer Peer
	// Caps are the client's capabilities: can it ask its user?
	Caps *mcp.ClientCapabilities
	// InputResponses and RequestState are a 2026-07-28 client's answers
	// to an input request of an earlier round of this call.
	InputResponses mcp.InputResponseMap
	RequestState   string
}

// Peer is the session a call came from, as the pipeline uses it.
// *mcp.ServerSession is one.
type Peer interface {
	NotifyProgress(context.Context, *mcp.ProgressNotificationParams) error
	Elicit(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error)
}

// sdkCall is the ToolCall of a tools/call request the go-sdk received.
func sdkCall(req *mcp.CallToolRequest) *ToolCall {
	p := req.Params
	c := &ToolCall{
		Name:           p.Name,
		Args:           p.Arguments,
		ProgressToken:  p.GetProgressToken(),
		Caps:           req.ClientCapabilities(),
		InputResponses: p.InputResponses,
		RequestState:   p.RequestState,
		Info: observe.CallInfo{
			Transport: "stdio",
			Client:    req.ClientInfo(),
			Protocol:  req.ProtocolVersion(),
			Meta:      p.Meta,
		},
	}
	if req.Session != nil {
		c.Peer = req.Session
		c.Info.Session = req.Session.ID()
	}
	if req.Extra != nil && req.Extra.Header != nil {
		c.Info.Transport = "http"
	}
	return c
}
