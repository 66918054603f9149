package parts

import "strings"

// Agent is what one MCP client hands its model of a tool result, as read
// in its package (docs/clients.md says where).
type Agent struct {
	Name    string   // as its users call it
	Clients []string // the clientInfo.name values it sends in initialize
	// Budget is the most text, in bytes, of one tool result that it hands
	// its model whole, with a margin.
	Budget int
	Above  string // what it does with a larger result
}

// Agents are the clients whose limit is known, read in their packages and
// measured against a fake model (docs/clients.md). The budgets count bytes
// of UTF-8 text, never fewer than the characters (UTF-16 units) or the
// quarter-tokens an agent counts.
var Agents = []Agent{
	{Name: "Claude Code", Clients: []string{"claude-code"}, Budget: 40_000,
		Above: "over 50,000 characters, or MAX_MCP_OUTPUT_TOKENS (25,000 tokens), the result is saved to a file and the model gets a note and a 2 KB preview"},
	{Name: "Codex", Clients: []string{"codex-mcp-client"}, Budget: 10_000,
		Above: "over tool_output_token_limit (10,000 tokens for OpenAI's models, 10,000 bytes for any other) the middle is cut out, wherever the cut falls"},
	{Name: "Gemini CLI", Clients: []string{"gemini-cli-mcp-client"}, Budget: 36_000,
		Above: "over truncateToolOutputThreshold (40,000 characters) a one-block result keeps its first 8,000 and last 32,000 characters, the rest saved to a file"},
	{Name: "OpenClaw", Clients: []string{"openclaw-bundle-mcp"}, Budget: 12_000,
		Above: "over its share of the context window (16,000 to 64,000 characters, half the window for a small one) the rest is cut off, wherever the cut falls"},
}

// DefaultBudget is the budget of a client whose limit is not known: what
// every known agent takes whole, with any model.
const DefaultBudget = 10_000

// BudgetFor is the budget of the client that names itself client in its
// clientInfo, and the agent's name ("" for an unknown client).
func BudgetFor(client string) (int, string) {
	for _, a := range Agents {
		for _, c := range a.Clients {
			if strings.EqualFold(c, client) {
				return a.Budget, a.Name
			}
		}
	}
	return DefaultBudget, ""
}
