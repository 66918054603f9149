package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"slices"

	"github.com/geilt/tairseach-mcp/internal/jsonenc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CallHandler serves the tool requests of a stdio session directly,
// without the SDK's per-request decoding and result encoding: on the hot
// path of every call these cost more than the socket round trip itself.
type CallHandler interface {
	// Ready is closed once the handler has its tools; HasTool and CallJSON
	// may be used only after it is.
	Ready() <-chan struct{}
	// HasTool reports whether name is a tool the handler serves; other
	// calls go through the SDK (which answers unknown tools).
	HasTool(name string) bool
	// CallJSON calls the tool and returns the CallToolResult as JSON, or
	// nil when ctx was cancelled.
	CallJSON(ctx context.Context, name string, args json.RawMessage) []byte
	// RegisterWithSDK makes the SDK's server know every tool, for a session
	// whose tool requests the SDK must answer itself.
	RegisterWithSDK()
	// Attach sends tools/list_changed to n when the tools change, until
	// detach is called.
	Attach(n Notifier) (detach func())
	// ServerInfoJSON returns the server's Implementation as JSON, as the
	// go-sdk puts it in the _meta of a 2026-07-28 result.
	ServerInfoJSON() []byte
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

// CallJSON implements CallHandler.
func (s *Server) CallJSON(ctx context.Context, name string, args json.RawMessage) []byte {
	res := s.Call(ctx, name, args)
	if res == nil {
		return nil
	}
	return encodeResult(res)
}

// ServerInfoJSON implements CallHandler.
func (s *Server) ServerInfoJSON() []byte { return s.info }

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

// encodeResult marshals a result made by Call exactly as the SDK would,
// copying the structured content (compact already) instead of re-compacting
// it; like the SDK (CallToolResult.MarshalJSON uses json.Marshal) it
// escapes HTML characters in it.
func encodeResult(res *mcp.CallToolResult) []byte {
	var text string
	if len(res.Content) == 1 {
		if t, ok := res.Content[0].(*mcp.TextContent); ok && t.Meta == nil && t.Annotations == nil {
			text = t.Text
		} else {
			return marshalResult(res)
		}
	} else {
		return marshalResult(res)
	}
	raw, _ := res.StructuredContent.(json.RawMessage)
	if res.StructuredContent != nil && raw == nil || res.Meta != nil {
		return marshalResult(res)
	}
	buf := make([]byte, 0, len(text)+len(raw)+len(text)/8+64)
	buf = append(buf, `{"content":[{"type":"text","text":`...)
	buf = jsonenc.AppendString(buf, text, true) // the SDK's TextContent escapes HTML
	buf = append(buf, "}]"...)
	if raw != nil {
		buf = append(buf, `,"structuredContent":`...)
		buf = appendHTMLEscaped(buf, raw) // as json.Marshal does to a RawMessage
	}
	if res.IsError {
		buf = append(buf, `,"isError":true`...)
	}
	return append(buf, '}')
}

// appendHTMLEscaped appends compact JSON with <, >, &, U+2028 and U+2029
// escaped inside strings, as encoding/json marshals a json.RawMessage.
func appendHTMLEscaped(buf, raw []byte) []byte {
	if !bytes.ContainsAny(raw, "<>&\u2028\u2029") {
		return append(buf, raw...)
	}
	var b bytes.Buffer
	json.HTMLEscape(&b, raw)
	return append(buf, b.Bytes()...)
}

func marshalResult(res *mcp.CallToolResult) []byte {
	b, err := json.Marshal(res)
	if err != nil {
		return encodeResult(errorResult("encoding the result: " + err.Error()))
	}
	return b
}
