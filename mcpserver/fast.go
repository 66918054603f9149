package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"slices"

	"github.com/geilt/tairseach-mcp/mcpserver/check"
	"github.com/geilt/tairseach-mcp/mcpserver/observe"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CallHandler serves the tool calls a stdio session hands over without the
// go-sdk's per-request decoding and result encoding: on the hot path of
// every call these cost more than the socket round trip itself.
type CallHandler interface {
	// Ready is closed once the handler has its tools; HasTool and
	// CallDirect may be used only after it is.
	Ready() <-chan struct{}
	// HasTool reports whether name is a tool the handler serves; other
	// calls go through the SDK (which answers unknown tools).
	HasTool(name string) bool
	// CallDirect calls a tool and returns the result as the go-sdk would
	// encode it for the request, or nil when ctx was cancelled.
	CallDirect(ctx context.Context, c DirectCall) []byte
	// RegisterWithSDK makes the SDK's server know every tool, for a session
	// whose tool requests the SDK must answer itself.
	RegisterWithSDK()
	// Attach sends tools/list_changed to n when the tools change, until
	// detach is called.
	Attach(n Notifier) (detach func())
}

// DirectCall is a tools/call as the stdio transport read it.
type DirectCall struct {
	ID          json.RawMessage // the client's id, as received
	Name        string
	Args        json.RawMessage
	Meta        json.RawMessage // params._meta, if any
	NewProtocol bool            // a request of 2026-07-28, its _meta valid
	// Session is the go-sdk's session of the stdio connection: progress is
	// reported and the user asked through it.
	Session *mcp.ServerSession
}

// Notifier is a session the server can tell about changes.
type Notifier interface {
	Notify(method string)
}

// HasTool implements CallHandler.
func (s *Server) HasTool(name string) bool {
	_, ok := s.routes.Load().byName[name]
	return ok
}

// CallDirect implements CallHandler: it fills in the ToolCall from the
// stdio session and the request, runs the pipeline and encodes the result.
func (s *Server) CallDirect(ctx context.Context, d DirectCall) []byte {
	c := &ToolCall{Name: d.Name, Args: d.Args, Info: observe.CallInfo{Transport: "stdio", RequestID: string(d.ID)}}
	if ss := d.Session; ss != nil {
		c.Peer = ss
		if p := ss.InitializeParams(); p != nil {
			c.Info.Client, c.Info.Protocol, c.Caps = p.ClientInfo, p.ProtocolVersion, p.Capabilities
		}
	}
	if len(d.Meta) > 0 && d.Meta[0] == '{' && (d.NewProtocol || s.obs.On() || s.cfg.ProgressInterval > 0 || s.confirms != nil) {
		var m struct {
			Progress any                     `json:"progressToken"`
			Client   *mcp.Implementation     `json:"io.modelcontextprotocol/clientInfo"`
			Caps     *mcp.ClientCapabilities `json:"io.modelcontextprotocol/clientCapabilities"`
		}
		if json.Unmarshal(d.Meta, &m) == nil {
			c.ProgressToken = m.Progress
			if d.NewProtocol {
				// A 2026-07-28 request carries its client in its own _meta.
				c.Info.Protocol, c.Caps = newProtocol, m.Caps
				if m.Client != nil {
					c.Info.Client = m.Client
				}
			}
		}
		if s.obs.On() {
			_ = json.Unmarshal(d.Meta, &c.Info.Meta)
		}
	}
	res := s.run(ctx, c)
	if res == nil {
		return nil
	}
	b := check.Encode(res)
	if d.NewProtocol {
		b = newProtocolResult(s.info, b, res.InputRequests != nil)
	}
	return b
}

// Attach implements CallHandler.
func (s *Server) Attach(n Notifier) (detach func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.attached[n] = struct{}{}
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.attached, n)
	}
}

// RegisterWithSDK implements CallHandler. Registering costs the SDK tens of
// microseconds a tool, so it is done only when a session or transport needs
// the SDK to answer tool requests itself; from then on Apply keeps the SDK
// in step. It waits for the first registry.
func (s *Server) RegisterWithSDK() {
	<-s.ready
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sdkSynced {
		return
	}
	s.sdkSynced = true
	for _, name := range slices.Sorted(maps.Keys(s.defs)) {
		if err := s.addTool(s.defs[name]); err != nil {
			s.log.Error().Str("tool", name).Err(err).Msg("registering tool")
		}
	}
}

// newProtocolResult turns a CallToolResult encoded by encodeResult into the
// one the go-sdk sends to a 2026-07-28 request: _meta with the server's
// Implementation first (Result's Meta is the first field), "resultType"
// after the result's own fields, before inputRequests (the go-sdk's
// CallToolResult.MarshalJSON writes them in that order). Call never sets a
// result _meta.
func newProtocolResult(info, result []byte, inputRequired bool) []byte {
	out := make([]byte, 0, len(info)+len(result)+80)
	out = append(out, `{"_meta":{"io.modelcontextprotocol/serverInfo":`...)
	out = append(out, info...)
	out = append(out, "},"...)
	body := result[1 : len(result)-1]
	if !inputRequired {
		out = append(out, body...)
		return append(out, `,"resultType":"complete"}`...)
	}
	// Content is empty and state is hex: the first match is the field.
	i := bytes.Index(body, []byte(`,"inputRequests":`))
	out = append(out, body[:i]...)
	out = append(out, `,"resultType":"input_required"`...)
	out = append(out, body[i:]...)
	return append(out, '}')
}
