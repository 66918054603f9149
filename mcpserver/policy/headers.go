package policy

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/geilt/tairseach-mcp/internal/quote"
)

// FromHeaders is the selection the X-MCP-* headers of a request make, read
// by the rules of the flags they mirror.
func FromHeaders(h http.Header) (Policy, error) {
	list := func(name string) []string { return SplitList(strings.Join(h.Values(name), ",")) }
	p := Policy{Tools: list(HeaderTools), ExcludeTools: list(HeaderExcludeTools), header: true}
	toolsets, err := ParseToolsets(HeaderToolsets, strings.Join(h.Values(HeaderToolsets), ","))
	if err != nil {
		return p, err
	}
	p.Toolsets = toolsets
	switch v := strings.ToLower(strings.TrimSpace(strings.Join(h.Values(HeaderReadonly), ","))); v {
	case "", "0", "false", "no", "off":
	case "1", "true", "yes", "on":
		p.ReadOnly = true
	default:
		return p, fmt.Errorf("%s: %s: want true or false", HeaderReadonly, quote.Line(v, quote.Text))
	}
	return p, p.Validate()
}
