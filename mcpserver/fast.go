package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"slices"

	"github.com/geilt/tairseach-mcp/mcpserver/check"
	"github.com/geilt/tairseach-mcp/mcpserver/observe"
	"github.com/geilt/tairseach-mcp/mcpserver/stdio"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HasTool implements CallHandler.
func (s *Server) HasTool(name string) bool {
	_, ok := s.routes.Load().byName[name]
	return ok
}

// CallDirect implements CallHandler: it fills in the ToolCall from the
// stdio session and the request, runs the pipeline and encodes the result.
func (s *Server) CallDirect(ctx context.Context, d stdio.DirectCall) []byte {
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
func (s *Server) Attach(n stdio.Notifier) (detach func()) {
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
