package policy

import (
	"fmt"
	"strings"

	"github.com/geilt/tairseach-mcp/internal/quote"
	"github.com/geilt/tairseach-mcp/mcpserver/permissions"
)

// HiddenBy names what keeps a tool from being served.
type HiddenBy int

// What can hide a tool.
const (
	NotHidden    HiddenBy = iota
	ByFlags               // the policy of the flags
	ByHeaders             // a selection made by HTTP request headers
	ByPermission          // a macOS permission that is not granted (Config.HideUngranted)
)

// Reason is why a tool is not served: what hides it, and the words that
// say so. The zero Reason serves it.
type Reason struct {
	By   HiddenBy
	Text string // "hidden by --read-only (…)"
}

// Message is the answer to a call of tool name, which r hides.
func (r Reason) Message(name string) string {
	switch r.By {
	case ByPermission:
		return fmt.Sprintf("tool %s is %s. Tell the user; once it is granted the tool is offered again within a minute", name, r.Text)
	case ByHeaders:
		return fmt.Sprintf("tool %s is %s; connect without that header to use the tool", name, r.Text)
	}
	return fmt.Sprintf("tool %s is %s; start tairseach-mcp without it to use the tool", name, r.Text)
}

// LeftOut is why a tool is left out for a macOS permission perm that is
// status, with how to grant it.
func LeftOut(perm string, status permissions.Status) Reason {
	return Reason{ByPermission, fmt.Sprintf("left out: it needs the macOS permission %s, which is %s (%s)", quote.Line(perm, quote.Name), status,
		strings.TrimSuffix(permissions.Remediation(perm, status), "."))}
}
