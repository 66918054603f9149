package main

// Codex (scripts/coders/package-lock.json), with the bridge as its MCP
// server and a fake OpenAI Responses API on loopback as its model: what
// the model gets of a tool result is what Codex sends it.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// codex returns the pinned Codex's native binary, from its platform
// package (the wrapper, bin/codex.js, only finds it and runs it).
func codex(t *testing.T) string {
	t.Helper()
	return codersBin(t, "Codex", filepath.Join("@openai", "codex-*", "vendor", "*", "bin", "codex"))
}

// responsesTool is a tool a Responses API request offers: a function, or
// a namespace of them (as Codex offers an MCP server's tools).
type responsesTool struct {
	Type  string          `json:"type"`
	Name  string          `json:"name"`
	Tools []responsesTool `json:"tools"`
}

// responsesItem is an item of a Responses API request's input.
type responsesItem struct {
	Type      string          `json:"type"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`      // function_call
	Namespace string          `json:"namespace"` // function_call
	Arguments json.RawMessage `json:"arguments"` // function_call: a string; tool_search_call: an object
	Output    json.RawMessage `json:"output"`    // function_call_output: a string or input_text items
	Tools     []responsesTool `json:"tools"`     // tool_search_output
}

// responsesRequest is the part of a Responses API request the fake reads.
type responsesRequest struct {
	Model string          `json:"model"`
	Tools []responsesTool `json:"tools"`
	Input []responsesItem `json:"input"`
}

// responsesAPI is a fake OpenAI Responses API whose model is readerCall.
// A tool Codex defers behind its tool search (as it does for gpt-5.5)
// the model first searches for by name, as a model must. It records the
// tool results, once.
type responsesAPI struct {
	mu      sync.Mutex // guards the fields below
	turns   int
	results []agentResult
	seen    map[string]bool // the call_ids of results
	paths   []string
}

func (a *responsesAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.paths = append(a.paths, r.Method+" "+r.URL.Path)
	a.mu.Unlock()
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models") {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"object": "list", "data": [], "models": []}`))
		return
	}
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses") {
		http.NotFound(w, r)
		return
	}
	if enc := r.Header.Get("Content-Encoding"); enc != "" {
		http.Error(w, "the fake model reads no Content-Encoding: "+enc, http.StatusUnsupportedMediaType)
		return
	}
	var req responsesRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	// The tools offered, by name, with their namespace: those of the
	// request, and those a tool search of the conversation found.
	offered := map[string]string{}
	search := false
	var add func(ns string, tools []responsesTool)
	add = func(ns string, tools []responsesTool) {
		for _, tool := range tools {
			switch tool.Type {
			case "namespace":
				add(tool.Name, tool.Tools)
			case "tool_search":
				search = true
			default:
				offered[tool.Name] = ns
			}
		}
	}
	add("", req.Tools)
	called := map[string]string{}
	searched := map[string]bool{}
	var results []agentResult
	var ids []string
	for _, it := range req.Input {
		switch it.Type {
		case "tool_search_output":
			add("", it.Tools)
		case "tool_search_call":
			var q struct{ Query string }
			_ = json.Unmarshal(it.Arguments, &q)
			searched[q.Query] = true
		case "function_call":
			called[it.CallID] = strings.TrimPrefix(it.Namespace+"__"+it.Name, "__")
		case "function_call_output":
			res := agentResult{tool: called[it.CallID]}
			var s string
			if json.Unmarshal(it.Output, &s) == nil {
				res.texts = []string{s}
			} else {
				var items []struct{ Type, Text string }
				_ = json.Unmarshal(it.Output, &items)
				for _, item := range items {
					if item.Type != "input_text" {
						res.texts = append(res.texts, "<an "+item.Type+" item>")
						continue
					}
					res.texts = append(res.texts, item.Text)
				}
			}
			results = append(results, res)
			ids = append(ids, it.CallID)
		}
	}

	a.mu.Lock()
	a.turns++
	turn := a.turns
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

	item := map[string]any{"type": "message", "id": fmt.Sprintf("msg_fake_%d", turn), "role": "assistant", "status": "completed",
		"content": []any{map[string]any{"type": "output_text", "text": "Done.", "annotations": []any{}}}}
	if tool, args, ok := readerCall(results); ok {
		// Codex names an MCP tool NAME in the namespace mcp__SERVER, or,
		// not deferred, mcp__SERVER__NAME.
		name, ns, found := tool, "", false
		for n, space := range offered {
			if n == tool || n == "mcp__tairseach__"+tool {
				name, ns, found = n, space, true
			}
		}
		switch {
		case found:
			item = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_fake_%d", turn), "call_id": fmt.Sprintf("call_fake_%d", turn),
				"name": name, "arguments": string(args), "status": "completed"}
			if ns != "" {
				item["namespace"] = ns
			}
		case search && !searched[tool]:
			item = map[string]any{"type": "tool_search_call", "id": fmt.Sprintf("tsc_fake_%d", turn), "call_id": fmt.Sprintf("call_search_%d", turn),
				"execution": "client", "status": "completed", "arguments": map[string]any{"query": tool}}
		}
	}
	resp := map[string]any{"id": fmt.Sprintf("resp_fake_%d", turn), "object": "response", "created_at": time.Now().Unix(),
		"model": req.Model, "status": "in_progress", "output": []any{}}
	w.Header().Set("Content-Type", "text/event-stream")
	event := func(data map[string]any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", data["type"], b)
	}
	event(map[string]any{"type": "response.created", "response": resp})
	event(map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
	event(map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	resp["status"], resp["output"] = "completed", []any{item}
	resp["usage"] = map[string]any{"input_tokens": 10, "input_tokens_details": map[string]int{"cached_tokens": 0},
		"output_tokens": 5, "output_tokens_details": map[string]int{"reasoning_tokens": 0}, "total_tokens": 15}
	event(map[string]any{"type": "response.completed", "response": resp})
}

// session returns the tool results and the requests' paths.
func (a *responsesAPI) session() (results []agentResult, paths []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.results), slices.Clone(a.paths)
}

// tomlString is s as a TOML basic string.
func tomlString(s string) string {
	b, _ := json.Marshal(s) // JSON's escapes of a string are TOML's
	return string(b)
}

// runCodex runs one codex exec session with prompt, in a new HOME, with
// the bridge (started with args) as its MCP server "tairseach", its tools
// approved, and api as its model provider, and returns its JSONL events.
func runCodex(t *testing.T, bin, api string, args []string, prompt string) string {
	t.Helper()
	home := shortDir(t)
	codexHome := filepath.Join(home, ".codex")
	work := filepath.Join(home, "work")
	for _, dir := range []string{codexHome, work} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = tomlString(a)
	}
	config := fmt.Sprintf(`model = "gpt-5.5"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "read-only"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = %s
env_key = "FAKE_OPENAI_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[mcp_servers.tairseach]
command = %s
args = [%s]
default_tools_approval_mode = "approve"
# Room for a bridge built with -race on a busy machine (10 s and 60 s by default).
startup_timeout_sec = 60
tool_timeout_sec = 120
`, tomlString(api+"/v1"), tomlString(bridgeBin), strings.Join(quoted, ", "))
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "exec", "--json", "--skip-git-repo-check", "--ephemeral", "-m", "gpt-5.5", prompt)
	cmd.Dir = work // stdin is /dev/null: codex exec reads no more of the prompt
	cmd.Env = append(slices.DeleteFunc(bridgeEnv(), func(kv string) bool {
		return strings.HasPrefix(kv, "CODEX_") || strings.HasPrefix(kv, "OPENAI_")
	}),
		"HOME="+home,
		"CODEX_HOME="+codexHome,
		"FAKE_OPENAI_KEY=sk-fake",
	)
	stdout, stderr, code := runLimited(t, cmd, 2*time.Minute)
	if code != 0 {
		t.Fatalf("codex exec: exit %d\nstdout:\n%.3000s\nstderr:\n%.3000s", code, stdout, stderr)
	}
	return stdout
}

// codexTime is the text Codex puts before an MCP tool's result: how long
// the call took.
var codexTime = regexp.MustCompile(`^Wall time: [0-9.]+ seconds\nOutput:$`)

// TestCodexResultParts runs Codex with the bridge against the demo backend
// with an address book, and a model (gpt-5.5, for which Codex defers MCP
// tools behind its tool search) that lists the contacts and then makes
// the one call the result's note names. Of 40 contacts (7.5 KB), which
// Codex takes whole, the model gets the bridge's text unchanged, one text
// after Codex's own line of the call's time, and makes no other call. Of
// 2,000 (376 KB) and 10,000 (1.9 MB), whose middle Codex would cut out,
// it gets part 1 as JSON of whole contacts from the first and a note
// saying what is left and which call returns part 2, and from that call
// part 2, whose contacts follow.
func TestCodexResultParts(t *testing.T) {
	t.Parallel() // its time is mostly Codex starting up
	bin := codex(t)
	for _, n := range []int{40, 2_000, 10_000} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			e := newEnv(t)
			startBackend(t, e.socket, "--address-book", strconv.Itoa(n))
			whole, book := addressBook(t, e)
			a := &responsesAPI{}
			api := httptest.NewServer(a)
			defer api.Close()

			events := runCodex(t, bin, api.URL, e.args("--log-level", "warn"), "List all my contacts.")
			results, paths := a.session()
			var texts [][]string
			for i, r := range results {
				if len(r.texts) == 0 || !codexTime.MatchString(r.texts[0]) {
					t.Fatalf("tool result %d (%s) does not start with Codex's line of the call's time: %.2000q", i+1, r.tool, r.texts)
				}
				texts = append(texts, r.texts[1:])
			}
			t.Logf("%d contacts, %d bytes: the model got %d results; requests %v", n, len(whole), len(results), paths)
			if len(results) == 0 {
				t.Fatalf("the model got no tool result; codex printed:\n%.3000s", events)
			}
			if len(whole) <= 10_000 {
				if len(texts) != 1 || len(texts[0]) != 1 || texts[0][0] != whole {
					t.Fatalf("the model did not get the list whole, one text, once: %d results: %.1000q", len(texts), texts)
				}
				return
			}
			got := modelParts(t, "Codex", texts)
			if len(results) != 2 || results[0].tool != "mcp__tairseach__tairseach_contacts_list" || results[1].tool != "mcp__tairseach__tairseach_result_part" {
				t.Fatalf("the model's calls: %d results (%s, …), want contacts.list's and then tairseach_result_part's; codex printed:\n%.3000s",
					len(results), results[0].tool, events)
			}
			checkParts(t, partsAgent{"Codex", 10_000}, whole, book, got)
		})
	}
}
