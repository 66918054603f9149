package main

// Claude Code (scripts/coders/package-lock.json), with the bridge as its
// MCP server and a fake Anthropic Messages API on loopback as its model:
// what the model gets of a tool result is what Claude Code sends it. The
// model, and the check of what it got, are Codex's too (codex_test.go).

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// codersDir is the tree of the pinned coding agents.
func codersDir() string {
	return filepath.Join(repoRoot, "scripts", "coders", "node_modules")
}

// codersBin returns the native binary that glob (under codersDir) finds:
// npm installs only the platform package that fits this machine, so at
// most one matches. It stops the test with the fix when there is none.
func codersBin(t *testing.T, agent, glob string) string {
	t.Helper()
	skipShort(t, "drives "+agent)
	found, _ := filepath.Glob(filepath.Join(codersDir(), glob))
	if len(found) == 0 {
		missingClients(t, "%s is not installed: run `make test`, or `cd scripts/coders && npm ci --ignore-scripts` (no %s)", agent, glob)
	}
	return found[0]
}

// claudeCode returns the pinned Claude Code's native binary, run from its
// platform package: the wrapper's bin/claude.exe is a stub until the
// postinstall, which npm ci --ignore-scripts does not run, links the
// binary there.
func claudeCode(t *testing.T) string {
	t.Helper()
	return codersBin(t, "Claude Code", filepath.Join("@anthropic-ai", "claude-code-*", "claude"))
}

// agentResult is one tool result as a model got it: the tool it called
// (as the agent names it) and the result's texts, in order.
type agentResult struct {
	tool    string
	texts   []string
	isError bool
}

// readerCall is the model of the tests of results in parts, whatever its
// API, given the tool results it has got: first it lists the contacts;
// given the result, it makes the call the result's note names, once; then
// it is done. tool is the bridge's name of the tool to call.
func readerCall(results []agentResult) (tool string, args json.RawMessage, ok bool) {
	switch len(results) {
	case 0:
		return "tairseach_contacts_list", json.RawMessage(`{}`), true
	case 1:
		for _, text := range results[0].texts {
			if m := nextCall.FindStringSubmatch(text); m != nil {
				return m[1], json.RawMessage(m[2]), true
			}
		}
	}
	return "", nil, false
}

// withheld are what an agent puts in place of a result it does not hand
// its model whole: Claude Code files it away and says where; Codex cuts
// out its middle and says how much.
var withheld = []string{"<persisted-output>", "saved to", "Output too large", "tokens truncated", "chars truncated", "Total output lines"}

// modelParts checks what a model got of contacts.list, as the agent's
// tool results (texts, after the agent's own framing): nothing was put
// in place of a result, and each result is a part and its note, two
// texts. It returns them for checkParts.
func modelParts(t *testing.T, agent string, results [][]string) []modelPart {
	t.Helper()
	var got []modelPart
	for i, texts := range results {
		for _, text := range texts {
			for _, w := range withheld {
				if strings.Contains(text, w) {
					t.Fatalf("%s did not hand its model tool result %d whole (%q): %.1500q", agent, i+1, w, texts)
				}
			}
		}
		if len(texts) != 2 || strings.HasPrefix(texts[0], "[tairseach-mcp]") || !strings.HasPrefix(texts[1], "[tairseach-mcp]") {
			t.Fatalf("tool result %d as %s's model got it is %d texts, want a part and its note: %.1500q", i+1, agent, len(texts), texts)
		}
		got = append(got, modelPart{data: texts[0], note: texts[1]})
	}
	return got
}

// anthropicBlock is a content block of a Messages API message.
type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`          // tool_use
	Name      string          `json:"name"`        // tool_use
	ToolUseID string          `json:"tool_use_id"` // tool_result
	Content   json.RawMessage `json:"content"`     // tool_result: a string or blocks
	IsError   bool            `json:"is_error"`    // tool_result
}

// anthropicRequest is the part of a Messages API request the fake reads.
type anthropicRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"` // a string or blocks
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

// blocks are a message's content blocks; a string is one text block.
func blocks(content json.RawMessage) []anthropicBlock {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return []anthropicBlock{{Type: "text", Text: s}}
	}
	var bs []anthropicBlock
	_ = json.Unmarshal(content, &bs)
	return bs
}

// anthropicAPI is a fake Anthropic Messages API whose model is readerCall.
// It records the tools each turn offered and each tool result, once.
type anthropicAPI struct {
	mu      sync.Mutex // guards the fields below
	turns   int
	offered [][]string
	results []agentResult
	seen    map[string]bool // the tool_use ids of results
}

func (a *anthropicAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	var raw json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&raw); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	switch r.URL.Path {
	case "/v1/messages/count_tokens":
		// As the API would, roughly: a token is about four bytes.
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"input_tokens": %d}`, len(raw)/4)
		return
	case "/v1/messages":
	default:
		http.NotFound(w, r)
		return
	}
	var req anthropicRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var names []string
	for _, tool := range req.Tools {
		names = append(names, tool.Name)
	}
	// The conversation's tool results, each with the tool whose call it
	// answers; the whole conversation is sent each turn.
	called := map[string]string{}
	var results []agentResult
	var ids []string
	for _, m := range req.Messages {
		for _, b := range blocks(m.Content) {
			switch b.Type {
			case "tool_use":
				called[b.ID] = b.Name
			case "tool_result":
				res := agentResult{tool: called[b.ToolUseID], isError: b.IsError}
				for _, c := range blocks(b.Content) {
					if c.Type != "text" {
						res.texts = append(res.texts, "<a "+c.Type+" block>")
						continue
					}
					res.texts = append(res.texts, c.Text)
				}
				results = append(results, res)
				ids = append(ids, b.ToolUseID)
			}
		}
	}

	a.mu.Lock()
	a.turns++
	turn := a.turns
	a.offered = append(a.offered, names)
	if a.seen == nil {
		a.seen = map[string]bool{}
	}
	for i, res := range results {
		if !a.seen[ids[i]] {
			a.seen[ids[i]] = true
			a.results = append(a.results, res)
		}
	}
	a.mu.Unlock()

	content := []map[string]any{{"type": "text", "text": "Done."}}
	stop := "end_turn"
	if tool, args, ok := readerCall(results); ok && slices.Contains(names, "mcp__tairseach__"+tool) {
		content = []map[string]any{{"type": "tool_use", "id": fmt.Sprintf("toolu_fake_%d", turn), "name": "mcp__tairseach__" + tool, "input": args}}
		stop = "tool_use"
	}
	usage := map[string]int{"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	id := fmt.Sprintf("msg_fake_%d", turn)
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": id, "type": "message", "role": "assistant", "model": req.Model,
			"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	event := func(name string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
	}
	event("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": id, "type": "message", "role": "assistant",
		"model": req.Model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}})
	for i, c := range content {
		if c["type"] == "text" {
			event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": c["text"]}})
		} else {
			event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": c["id"], "name": c["name"], "input": map[string]any{}}})
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": string(c["input"].(json.RawMessage))}})
		}
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 5}})
	event("message_stop", map[string]any{"type": "message_stop"})
}

// session returns the tools each turn offered and the tool results.
func (a *anthropicAPI) session() (offered [][]string, results []agentResult) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.offered), slices.Clone(a.results)
}

// claudeCodeOut is the part of claude -p --output-format json read here.
type claudeCodeOut struct {
	IsError  bool   `json:"is_error"`
	NumTurns int    `json:"num_turns"`
	Result   string `json:"result"`
}

// runClaudeCode runs one claude -p session with prompt, in a new HOME,
// with the bridge (started with args) as its MCP server "tairseach" and
// api as its model, and returns what it printed.
func runClaudeCode(t *testing.T, bin, api string, args []string, prompt string) claudeCodeOut {
	t.Helper()
	home := shortDir(t)
	work := filepath.Join(home, "work")
	if err := os.MkdirAll(work, 0o700); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(home, "mcp.json")
	writeJSON(t, config, map[string]any{"mcpServers": map[string]any{"tairseach": map[string]any{
		"type": "stdio", "command": bridgeBin, "args": args,
	}}})
	cmd := exec.Command(bin, "-p", prompt, "--mcp-config", config, "--strict-mcp-config",
		"--allowedTools", "mcp__tairseach__tairseach_contacts_list,mcp__tairseach__tairseach_result_part",
		"--output-format", "json")
	cmd.Dir = work
	cmd.Env = append(slices.DeleteFunc(bridgeEnv(), func(kv string) bool {
		return strings.HasPrefix(kv, "ANTHROPIC_") || strings.HasPrefix(kv, "CLAUDE_") || strings.HasPrefix(kv, "MAX_MCP_") ||
			strings.HasPrefix(kv, "ENABLE_") || strings.HasPrefix(kv, "DISABLE_")
	}),
		"HOME="+home,
		"ANTHROPIC_BASE_URL="+api, // the model's API: the fake
		"ANTHROPIC_API_KEY=sk-ant-fake",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		// The MCP tools offered to the model at once, not behind its
		// tool search.
		"ENABLE_TOOL_SEARCH=false",
	)
	stdout, stderr, code := runLimited(t, cmd, 2*time.Minute)
	var out claudeCodeOut
	if err := json.Unmarshal([]byte(stdout), &out); err != nil || code != 0 || out.IsError {
		t.Fatalf("claude -p: exit %d, %v\nstdout:\n%.3000s\nstderr:\n%.3000s", code, err, stdout, stderr)
	}
	return out
}

// TestClaudeCodeResultParts runs Claude Code with the bridge against the
// demo backend with an address book, and a model that lists the contacts
// and then makes the one call the result's note names. Of 40 contacts
// (7.5 KB), which Claude Code takes whole, the model gets the bridge's
// text unchanged, one text, and makes no other call. Of 2,000 (376 KB)
// and 10,000 (1.9 MB), which Claude Code would file away and show its
// model 2 KB of, it gets part 1 as JSON of whole contacts from the first
// and a note saying what is left and which call returns part 2, and from
// that call part 2, whose contacts follow.
func TestClaudeCodeResultParts(t *testing.T) {
	t.Parallel() // its time is mostly Claude Code starting up
	bin := claudeCode(t)
	for _, n := range []int{40, 2_000, 10_000} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			e := newEnv(t)
			startBackend(t, e.socket, "--address-book", strconv.Itoa(n))
			whole, book := addressBook(t, e)
			a := &anthropicAPI{}
			api := httptest.NewServer(a)
			defer api.Close()

			out := runClaudeCode(t, bin, api.URL, e.args("--log-level", "warn"), "List all my contacts.")
			offered, results := a.session()
			if len(offered) == 0 || !slices.Contains(offered[0], "mcp__tairseach__tairseach_contacts_list") ||
				!slices.Contains(offered[0], "mcp__tairseach__tairseach_result_part") {
				t.Fatalf("the model was not offered the bridge's tools: %v", offered)
			}
			var texts [][]string
			for i, r := range results {
				if r.isError {
					t.Fatalf("tool result %d (%s) is an error: %.2000q", i+1, r.tool, r.texts)
				}
				texts = append(texts, r.texts)
			}
			t.Logf("%d contacts, %d bytes: the model got %d results in %d turns", n, len(whole), len(results), out.NumTurns)
			if len(whole) <= 40_000 {
				if len(texts) != 1 || len(texts[0]) != 1 || texts[0][0] != whole {
					t.Fatalf("the model did not get the list whole, one text, once: %d results: %.1000q", len(texts), texts)
				}
				return
			}
			got := modelParts(t, "Claude Code", texts)
			if len(results) != 2 || results[0].tool != "mcp__tairseach__tairseach_contacts_list" || results[1].tool != "mcp__tairseach__tairseach_result_part" {
				t.Fatalf("the model's calls: %d results, want contacts.list's and then tairseach_result_part's", len(results))
			}
			checkParts(t, partsAgent{"Claude Code", 40_000}, whole, book, got)
		})
	}
}
