package mcpserver

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// The request headers that narrow the tools of an HTTP request or session.
const (
	HeaderToolsets     = "X-MCP-Toolsets"
	HeaderReadonly     = "X-MCP-Readonly"
	HeaderTools        = "X-MCP-Tools"
	HeaderExcludeTools = "X-MCP-Exclude-Tools"
)

// MaxNarrowedServers bounds the distinct header selections served at once:
// each has a go-sdk server of its own, kept for the life of the process.
const MaxNarrowedServers = 32

type narrowedServerKey struct{}

// PolicyFromHeaders is the selection the X-MCP-* headers of a request make.
func PolicyFromHeaders(h http.Header) (Policy, error) {
	list := func(name string) []string { return SplitList(strings.Join(h.Values(name), ",")) }
	p := Policy{Toolsets: list(HeaderToolsets), Tools: list(HeaderTools), ExcludeTools: list(HeaderExcludeTools), header: true}
	if slices.Contains(p.Toolsets, "all") {
		p.Toolsets = nil
	}
	switch v := strings.ToLower(strings.TrimSpace(strings.Join(h.Values(HeaderReadonly), ","))); v {
	case "", "0", "false", "no", "off":
	case "1", "true", "yes", "on":
		p.ReadOnly = true
	default:
		return p, fmt.Errorf("%s: %q: want true or false", HeaderReadonly, v)
	}
	return p, p.Validate()
}
