package main

// What OpenClaw's model gets of a result larger than OpenClaw hands its
// model whole, and of one it takes whole (agent_parts_test.go does the
// same with Gemini CLI).

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// ocPart is the bridge's tool that reads a part, as OpenClaw names it.
const ocPart = "tairseach__tairseach_result_part"

// TestOpenClawResultParts runs OpenClaw's agent with the bridge against
// the demo backend with an address book, and a model that lists the
// contacts and then makes the one call the result's note names. OpenClaw
// cuts a result over its share of the model's context window (32,000
// characters for a window of 128,000 tokens, 16,000 for 32,000), wherever
// the cut falls, and the bridge sends it 12,000 bytes at most. Of 40
// contacts the model gets the whole list unchanged and makes no call. Of
// 2,000 (376 KB) it gets part 1 as JSON of whole contacts from the first,
// a note saying what is left, and part 2 from the call the note names,
// none cut by OpenClaw.
func TestOpenClawResultParts(t *testing.T) {
	t.Parallel() // its time is mostly OpenClaw starting up
	node := openClawNode(t)
	for _, tt := range []struct{ contacts, window int }{
		{40, 128_000}, {2_000, 128_000}, {2_000, 32_000},
	} {
		t.Run(fmt.Sprintf("%d contacts, window %d", tt.contacts, tt.window), func(t *testing.T) {
			e := newEnv(t)
			startBackend(t, e.socket, "--address-book", strconv.Itoa(tt.contacts))
			whole, book := addressBook(t, e)
			api := startOpenClawAPI(t, &fakeModel{sequence: []geminiWish{{ocContacts, map[string]any{}}}, follow: 1})
			home := shortDir(t)
			cfg := openClawModel(api.url, false, false)
			setContextWindow(t, cfg, tt.window)
			cfg["mcp"] = map[string]any{"servers": map[string]any{"tairseach": map[string]any{"command": bridgeBin, "args": e.args("--log-level", "warn")}}}
			config := writeOpenClawConfig(t, home, cfg)

			turn := agentTurn(t, node, home, config, "List all my contacts.")
			_, responses, _ := api.session()
			var got []modelPart
			for i, r := range responses {
				out, errText := modelOutput(r)
				if errText != "" {
					t.Fatalf("OpenClaw gave its model an error for tool result %d: %.2000s", i+1, errText)
				}
				if j := strings.Index(out, "more characters truncated"); j >= 0 {
					t.Fatalf("OpenClaw cut tool result %d (%d characters reached the model): %.300q", i+1, j, out[max(0, j-200):])
				}
				// OpenClaw hands its model the text blocks one after another,
				// on lines of their own.
				p := modelPart{data: out}
				if j := strings.LastIndex(out, "\n[tairseach-mcp] "); j >= 0 {
					p = modelPart{data: out[:j], note: out[j+1:]}
				}
				got = append(got, p)
			}
			t.Logf("%d contacts, %d bytes: the model got %d results; the turn %+v", tt.contacts, len(whole), len(got), turn.ToolSummary)
			if !turn.OK {
				t.Errorf("the turn: %+v", turn)
			}
			if len(whole) <= 12_000 {
				if len(got) != 1 || got[0].data != whole || got[0].note != "" || turn.ToolSummary.Calls != 1 {
					t.Fatalf("the model did not get the list whole, once (%d results, %d calls): %.500q", len(got), turn.ToolSummary.Calls, got)
				}
				return
			}
			checkParts(t, partsAgent{"OpenClaw", 12_000}, whole, book, got)
			if turn.ToolSummary.Calls != 2 {
				t.Errorf("OpenClaw counted %d calls, want 2 (contacts.list, then %s): %+v", turn.ToolSummary.Calls, ocPart, turn.ToolSummary)
			}
		})
	}
}

// setContextWindow sets the context window of the model of cfg, made by
// openClawModel, to tokens.
func setContextWindow(t *testing.T, cfg map[string]any, tokens int) {
	t.Helper()
	providers := cfg["models"].(map[string]any)["providers"].(map[string]any)
	models := providers["fake"].(map[string]any)["models"].([]any)
	models[0].(map[string]any)["contextWindow"] = tokens
}
