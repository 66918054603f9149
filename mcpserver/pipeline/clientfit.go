package pipeline

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/internal/jsonscan"
	"github.com/geilt/tairseach-mcp/mcpserver/check"
)

// geminiClient is the clientInfo.name Gemini CLI sends.
const geminiClient = "gemini-cli-mcp-client"

// fitClient returns res as c's client hands it to its model, where a
// client would turn a valid result into an error:
//
// Gemini CLI (0.61) parses the first text block of every result without
// structuredContent as JSON and sets what it finds as structuredContent,
// which its MCP SDK then refuses unless it is an object: a tool answering
// a JSON array (1Password's lists, Jira's projects), a number or a string
// reached its model as "[structuredContent] … expected record". With the
// value as structuredContent's "result" member the text is left as it is
// and the model reads it; Gemini CLI shows the model content, never
// structuredContent. docs/clients.md says where this is in its bundle.
func fitClient(c *Request, res *mcp.CallToolResult, maxBytes int) *mcp.CallToolResult {
	if res == nil || !c.isTool() || res.StructuredContent != nil || len(res.Content) == 0 ||
		c.Info.Client == nil || c.Info.Client.Name != geminiClient {
		return res
	}
	t, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return res
	}
	b := []byte(t.Text)
	i := jsonscan.SkipSpace(b, 0)
	if i == len(b) || b[i] == '{' || !jsonscan.Valid(b) {
		return res // not JSON, or an object: Gemini CLI takes it
	}
	fit := *res
	sc := make([]byte, 0, len(b)+12)
	sc = append(append(append(sc, `{"result":`...), jsonscan.Compact(b[i:])...), '}')
	fit.StructuredContent = json.RawMessage(sc)
	if _, ok := check.Size(&fit, maxBytes-EnvelopeReserve); !ok {
		return res
	}
	return &fit
}
