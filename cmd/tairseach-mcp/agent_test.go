package main

// An agent CLI, Gemini CLI (scripts/agents/package-lock.json), with the
// bridge as its MCP server and a fake Gemini API on loopback as its model:
// what the model is offered is what the agent sends it.

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
	"strings"
	"sync"
	"testing"
	"time"
)

// geminiCLI returns the pinned Gemini CLI, or stops the test with the fix
// when it is not installed.
func geminiCLI(t *testing.T) string {
	t.Helper()
	skipShort(t, "drives Gemini CLI")
	bin := filepath.Join(repoRoot, "scripts", "agents", "node_modules", ".bin", "gemini")
	if _, err := os.Stat(bin); err != nil {
		missingClients(t, "Gemini CLI is not installed: run `make test`, or `cd scripts/agents && npm ci --omit=optional` (%v)", err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		missingClients(t, "node is not installed: %v", err)
	}
	return bin
}

// geminiPart is a part of a Gemini API message.
type geminiPart struct {
	Text         string `json:"text,omitempty"`
	FunctionCall *struct {
		Name string         `json:"name"`
		Args map[string]any `json:"args"`
	} `json:"functionCall,omitempty"`
	FunctionResponse *struct {
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse,omitempty"`
}

// geminiRequest is the part of a generateContent request the fake model reads.
type geminiRequest struct {
	Contents []struct {
		Role  string       `json:"role"`
		Parts []geminiPart `json:"parts"`
	} `json:"contents"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
}

// fakeModel is a Gemini API that calls one tool and then answers: asked
// with no tool result yet, it calls the first of its wishes that the
// request offers; given a tool result, it says it is done (or it makes
// the calls of its sequence, or follows the result's note). It records
// the tools each request offered and the tool results it was given.
type fakeModel struct {
	wishes []geminiWish
	// sequence, when set, are the calls the model makes in turn, one a
	// request, whatever it is offered; then it says it is done.
	sequence []geminiWish
	// follow is how many times, after its wishes or sequence, the model
	// makes the call the last tool result names ("Next: call NAME with
	// ARGS", as the bridge's note of a result in parts says), as a model
	// that reads the note would, rather than saying it is done: the
	// offered function that is NAME under the agent's prefix, with ARGS.
	follow int

	mu        sync.Mutex // guards the fields below
	offered   [][]string // the function names of each request
	responses []string   // each functionResponse, as JSON
	paths     []string   // each request's path
}

// geminiWish is a function the fake model calls when it is offered.
type geminiWish struct {
	name string
	args map[string]any
}

func (m *fakeModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req geminiRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	m.paths = append(m.paths, r.URL.Path)
	m.mu.Unlock()
	if strings.HasSuffix(r.URL.Path, ":countTokens") {
		// Asked to size the conversation: not a turn of the model.
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"totalTokens": 15}`))
		return
	}
	var names []string
	for _, tool := range req.Tools {
		for _, fd := range tool.FunctionDeclarations {
			names = append(names, fd.Name)
		}
	}
	// The tool result to answer: the last one, unless the model has spoken
	// since. An agent may add text of its own after it (OpenClaw adds its
	// context). results counts the results of the whole conversation.
	var result *geminiPart
	results, spoke := 0, false
	for i := len(req.Contents) - 1; i >= 0; i-- {
		c := req.Contents[i]
		found := false
		for _, p := range c.Parts {
			if p.FunctionResponse == nil {
				continue
			}
			results++
			if !spoke && (result == nil || found) {
				result, found = &p, true // the last of that content's results
			}
		}
		if c.Role == "model" && results == 0 {
			spoke = true
		}
	}
	m.mu.Lock()
	m.offered = append(m.offered, names)
	if result != nil {
		m.responses = append(m.responses, string(result.FunctionResponse.Response))
	}
	m.mu.Unlock()

	part := map[string]any{"text": "Done."}
	call := func(wish geminiWish) {
		part = map[string]any{"functionCall": map[string]any{"name": wish.name, "args": wish.args}}
	}
	planned := 1 // the wish's call
	if m.sequence != nil {
		planned = len(m.sequence)
		if results < len(m.sequence) {
			call(m.sequence[results])
		}
	} else if result == nil {
		for _, wish := range m.wishes {
			if slices.Contains(names, wish.name) {
				call(wish)
				break
			}
		}
	}
	if _, done := part["text"]; done && result != nil && results-planned < m.follow {
		if wish, ok := noteCall(string(result.FunctionResponse.Response), names); ok {
			call(wish)
		}
	}
	resp, _ := json.Marshal(map[string]any{
		"candidates": []any{map[string]any{
			"content":      map[string]any{"role": "model", "parts": []any{part}},
			"finishReason": "STOP",
			"index":        0,
		}},
		"usageMetadata": map[string]int{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
	})
	if strings.HasSuffix(r.URL.Path, ":streamGenerateContent") {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte("data: " + string(resp) + "\r\n\r\n"))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(resp)
}

// nextCall is the call a note of the bridge's names for the next part of
// a result.
var nextCall = regexp.MustCompile(`Next: call (\S+) with (\{"id": "(r[a-z2-7]+)", "part": (\d+)\})`)

// noteCall is the call the tool result response (a functionResponse's
// response, as JSON) names in a note, as the agent offers it among names:
// the bridge names its own tool, which an agent offers under a prefix of
// its own (Gemini CLI mcp_SERVER_, OpenClaw SERVER__).
func noteCall(response string, names []string) (geminiWish, bool) {
	text, _ := modelOutput(response)
	m := nextCall.FindStringSubmatch(text)
	if m == nil {
		return geminiWish{}, false
	}
	var args map[string]any
	if json.Unmarshal([]byte(m[2]), &args) != nil {
		return geminiWish{}, false
	}
	for _, n := range names {
		if n == m[1] || strings.HasSuffix(n, "_"+m[1]) {
			return geminiWish{n, args}, true
		}
	}
	return geminiWish{}, false
}

// modelOutput is what a tool result response (as JSON) hands the model:
// its output, or the error the agent made of the result.
func modelOutput(response string) (output, errText string) {
	var r struct {
		Output any `json:"output"`
		Error  any `json:"error"`
	}
	if err := json.Unmarshal([]byte(response), &r); err != nil {
		return "", "not JSON: " + err.Error()
	}
	if r.Error != nil {
		if s, ok := r.Error.(string); ok {
			return "", s
		}
		b, _ := json.Marshal(r.Error)
		return "", string(b)
	}
	s, ok := r.Output.(string)
	if !ok {
		return "", fmt.Sprintf("output is not a text: %.300s", response)
	}
	return s, ""
}

// session returns what the model was sent since the last call.
func (m *fakeModel) session() (offered [][]string, responses, paths []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	offered, responses, paths = m.offered, m.responses, m.paths
	m.offered, m.responses, m.paths = nil, nil, nil
	return offered, responses, paths
}

// geminiStats is the part of Gemini CLI's --output-format json read here.
type geminiStats struct {
	Response string
	Stats    struct {
		Tools struct {
			TotalCalls, TotalSuccess, TotalFail int
			ByName                              map[string]struct{ Count, Success int }
		}
	}
}

// geminiHome returns a new HOME whose Gemini CLI settings have the bridge,
// started with args, as its MCP server "tairseach", trusted.
func geminiHome(t *testing.T, args []string) string {
	t.Helper()
	home := shortDir(t)
	writeJSON(t, filepath.Join(home, ".gemini", "settings.json"), map[string]any{
		"security":  map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
		"general":   map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true},
		"mcpServers": map[string]any{"tairseach": map[string]any{
			"command": bridgeBin,
			"args":    args,
			"trust":   true, // its calls need no confirmation
		}},
	})
	return home
}

// runGemini runs one non-interactive Gemini CLI session with prompt, in
// home (which holds its settings), and returns what it printed.
func runGemini(t *testing.T, bin, home, model, prompt string) geminiStats {
	t.Helper()
	work := filepath.Join(home, "work")
	if err := os.MkdirAll(work, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--prompt", prompt, "--model", "gemini-2.5-flash", "--output-format", "json")
	cmd.Dir = work
	cmd.Env = append(slices.DeleteFunc(bridgeEnv(), func(kv string) bool {
		return strings.HasPrefix(kv, "GEMINI_") || strings.HasPrefix(kv, "GOOGLE_")
	}),
		"HOME="+home,
		"GEMINI_API_KEY=test-key-not-used",
		"GOOGLE_GEMINI_BASE_URL="+model, // the model's API: the fake
		"GEMINI_CLI_TRUST_WORKSPACE=true",
		"NO_COLOR=1",
	)
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("gemini: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
		}
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("gemini did not finish within 2 minutes\nstdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	var out geminiStats
	if err := json.Unmarshal([]byte(stdout.String()), &out); err != nil {
		t.Fatalf("gemini's output: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	return out
}

// TestGeminiCLIOffersOnlyGrantedTools runs Gemini CLI with the bridge as
// its MCP server, against the demo backend with screen recording denied:
// the model is offered no screen tool, and calls one to check the
// permission. The permission is granted in the backend; the next session
// offers the model screen.capture, which it calls.
func TestGeminiCLIOffersOnlyGrantedTools(t *testing.T) {
	bin := geminiCLI(t)
	e, grants := permissionsEnv(t)
	const (
		capture = "mcp_tairseach_tairseach_screen_capture"
		check   = "mcp_tairseach_tairseach_permissions_check"
	)
	model := &fakeModel{wishes: []geminiWish{
		{capture, map[string]any{}},
		{check, map[string]any{"permission": "screen_recording"}},
	}}
	api := httptest.NewServer(model)
	defer api.Close()

	home := geminiHome(t, e.args("--log-level", "warn"))

	// session runs one and returns the tools each request offered the
	// model, and the tool results it was sent.
	session := func(prompt string) (offered [][]string, responses []string, out geminiStats) {
		t.Helper()
		out = runGemini(t, bin, home, api.URL, prompt)
		offered, responses, paths := model.session()
		if len(offered) == 0 {
			t.Fatalf("the model was sent nothing; gemini said %+v", out)
		}
		t.Logf("requests: %v", paths)
		return offered, responses, out
	}

	offered, responses, out := session("Take a screenshot of my screen.")
	if !slices.Contains(offered[0], check) || !slices.Contains(offered[0], "mcp_tairseach_tairseach_contacts_list") {
		t.Fatalf("the model was not offered the bridge's tools: %v", offered[0])
	}
	for _, names := range offered {
		for _, name := range names {
			if strings.Contains(name, "screen") {
				t.Errorf("with screen recording denied the model was offered %s: %v", name, names)
			}
		}
	}
	if len(responses) != 1 || !strings.Contains(responses[0], `\"status\":\"denied\"`) || out.Stats.Tools.ByName[check].Success != 1 {
		t.Errorf("the model's call of permissions.check: results %v, stats %+v", responses, out.Stats.Tools)
	}

	writeGrants(t, grants, "screen_recording=granted\n")
	offered, responses, out = session("Take a screenshot of my screen.")
	if !slices.Contains(offered[0], capture) {
		t.Fatalf("after the grant the model was not offered %s: %v", capture, offered[0])
	}
	if len(responses) != 1 || !strings.Contains(responses[0], `\"path\":`) || !strings.Contains(responses[0], "image/png") ||
		out.Stats.Tools.ByName[capture].Success != 1 {
		t.Errorf("the model's call of screen.capture: results %.500q, stats %+v", responses, out.Stats.Tools)
	}
}
