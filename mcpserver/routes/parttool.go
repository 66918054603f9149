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
		Title:       "Read the next part of a large result",
		Description: "Read one part of a Tairseach result that was too large to send at once. Such a result comes as its first part, whole JSON items, followed by a note with the result's id and the call that returns the next part; call this tool with that id and part number. Parts are held for this session only, for a while after their last read.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"the result's id, as the note after its first part gives it"},"part":{"type":"integer","minimum":1,"description":"the part to read: 2 for the second"}},"required":["id","part"],"additionalProperties":false}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: boolPtr(false)},
	}
	b, _ := json.Marshal(def)
	return def, b
}
