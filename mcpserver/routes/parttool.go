package routes

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/manifest"
)

// partToolName is the name, after the prefix, of the tool that reads a
// part of a result sent in parts (mcpserver/parts).
const partToolName = "result_part"

// partTool is the definition of the tool that reads a part of a result
// sent in parts, and its name. It is listed with the tools served, in
// every tool mode: a result too large for the client's agent says to call
// it, and an agent calls only the tools it was offered.
func partTool(prefix string) (*mcp.Tool, []byte) {
	name, _ := manifest.MCPName(prefix, partToolName)
	def := &mcp.Tool{
		Name:        name,
		Description: "Read a part of a Tairseach result too large to send at once: pass the id and part number its note gives. For this session only.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"},"part":{"type":"integer","minimum":1}},"required":["id","part"]}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: boolPtr(false)},
	}
	b, _ := json.Marshal(def)
	return def, b
}
