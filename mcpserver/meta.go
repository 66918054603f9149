package mcpserver

import (
	"bytes"
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// metaCache keeps the _meta of the stdio direct path's last call decoded.
type metaCache struct{ last atomic.Pointer[directMeta] }

// decode decodes a direct call's _meta, or returns the last one decoded
// when the bytes are the same: a 2026-07-28 client sends the same _meta
// (its capabilities and name) with every request.
func (c *metaCache) decode(raw []byte) *directMeta {
	if m := c.last.Load(); m != nil && bytes.Equal(m.raw, raw) {
		return m
	}
	m := &directMeta{raw: bytes.Clone(raw)}
	m.ok = json.Unmarshal(raw, m) == nil
	if len(raw) <= 4<<10 {
		c.last.Store(m)
	}
	return m
}

// directMeta is what CallDirect reads of a request's _meta. It is shared
// by the requests whose _meta has the same bytes, and never changed.
type directMeta struct {
	raw      []byte
	ok       bool
	allOnce  sync.Once
	allMeta  map[string]any          // all of it, for OpenTelemetry; read only
	Progress json.RawMessage         `json:"progressToken"` // as it came: a number may not survive a float64
	Client   *mcp.Implementation     `json:"io.modelcontextprotocol/clientInfo"`
	Caps     *mcp.ClientCapabilities `json:"io.modelcontextprotocol/clientCapabilities"`
}

// all returns the whole _meta decoded, once.
func (m *directMeta) all() map[string]any {
	m.allOnce.Do(func() { _ = json.Unmarshal(m.raw, &m.allMeta) })
	return m.allMeta
}
