package mcpserver

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The cache fields of 2026-07-28 (SEP-2549), ttlMs and cacheScope, which
// server/discover, the four lists and resources/read carry. The go-sdk
// writes "public" where nothing is set; here nothing is public, as every
// such result depends on this user, this machine or this session:
//
//   - tools/list: the manifests in this user's folder, the macOS grants of
//     this Mac, the session's selection (flags, X-MCP-* headers);
//   - prompts/list: this user's prompt files and the manifests, as the
//     selection serves them;
//   - resources/list: this user's log files, by their paths, and the
//     manifests; resources/templates/list: the manifests, as the selection
//     serves them;
//   - resources/read: logs, status, permissions and the backend's replies
//     are this user's data; a manifest is this user's file and may name
//     local paths (a script's entrypoint, a socket);
//   - server/discover: the instructions name the capabilities of this
//     user's manifests and the permissions macOS has not granted.
//
// docs/resources-prompts.md ("Cache fields") has the table.
const cacheScope = "private"

// ListTTL is the ttlMs of the four lists. Each changes with notice: the
// manifests and prompt files are watched, the log folder looked at every
// 250 ms, the grants read every minute, and each change the server learns
// of is sent as list_changed, which clears a client's cache. The TTL only
// bounds how stale a client that does not listen may be, so it is short:
// the server itself learns of a manifest change within its 150 ms debounce.
const ListTTL = time.Second

// setCacheFields is the go-sdk's SetCacheable: every result that carries
// the cache fields passes here, on every transport and revision, and for
// the servers of header selections. A TTL a feature's handler set (a
// resource it knows to be stable) is kept; otherwise a read is stale at
// once: logs grow, the status and the backend's replies change with no
// notice.
func setCacheFields(_ context.Context, req mcp.Request, c *mcp.Cacheable) {
	c.CacheScope = cacheScope
	switch req.(type) {
	case *mcp.ListToolsRequest, *mcp.ListPromptsRequest, *mcp.ListResourcesRequest, *mcp.ListResourceTemplatesRequest:
		c.TTLMs = int(ListTTL / time.Millisecond)
	}
}
