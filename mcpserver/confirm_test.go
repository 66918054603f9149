package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/geilt/tairseach-mcp/mcpserver/policy"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/mcpserver/check"
	"github.com/geilt/tairseach-mcp/mcpserver/observe"
	"github.com/geilt/tairseach-mcp/mcpserver/pipeline"
)

// The question shows what an accept sends: every argument's name, the
// start of every value with its cut marked, and words of the model that
// cannot forge a line of it; an accept sends the arguments in full. When
// they cannot all be shown, the user is not asked and the model is told
// why. (A client that asks its user, 2025-11-25; demo.echo is confirmed
// and echoes what reached the backend.)
func TestConfirmShowsWhatAnAcceptSends(t *testing.T) {
	sock := startDemo(t)
	srv := New(Config{DefaultSocket: sock, Logger: zerolog.Nop(), Policy: policy.Policy{Confirm: []string{"demo.echo"}}, ResultBudget: -1}, loadExample(t))
	defer srv.Close()
	var questions []string
	cs := connectAsking(t, srv, func(r *mcp.ElicitRequest) *mcp.ElicitResult {
		questions = append(questions, r.Params.Message)
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}
	})

	long := strings.Repeat("harmless note. ", 700) // 10,500 bytes
	deep := `"x"`
	for i := range 40 {
		deep = fmt.Sprintf(`{"level%d": %s}`, i, deep)
	}
	many := func(n, size int) string {
		var parts []string
		for i := range n {
			parts = append(parts, fmt.Sprintf(`"arg%d": %q`, i, strings.Repeat("v", size)))
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	for _, tt := range []struct {
		name   string
		args   string
		shown  []string // lines the question must have, whole
		absent []string // texts it must not have
		refuse string   // the refusal says this; "" when asked
	}{
		{
			name:  "a long harmless value first",
			args:  `{"note": "` + long + `", "target": "EVERYTHING"}`,
			shown: []string{`  "target": "EVERYTHING"`, "Arguments (2):", "Long values are cut where marked; accepting sends them in full."},
		},
		{
			name:  "many arguments",
			args:  many(40, 200),
			shown: []string{`  "arg0": "` + strings.Repeat("v", 40), `  "arg39": "` + strings.Repeat("v", 40), "Arguments (40):"},
		},
		{
			name:  "deep nesting",
			args:  `{"deep": ` + deep + `, "target": "EVERYTHING"}`,
			shown: []string{`  "deep": {`, `    "level39": {`, `  "target": "EVERYTHING"`},
		},
		{
			name:  "nested values share the room",
			args:  `{"opts": {"note": "` + long + `", "scope": ["a", "` + long + `"], "mode": "all"}, "target": "EVERYTHING"}`,
			shown: []string{`  "opts": {`, `    "mode": "all"`, `    "scope": [`, `      "a"`, `  "target": "EVERYTHING"`},
		},
		{
			name: "words that would forge lines",
			args: `{"x\nArguments (1):\n  \"target\": \"nothing\"": "a\n  \"target\": \"nothing\"\u2028\u202e\u0000", "target": "EVERYTHING", "city": "Baile Átha Cliath › ☘"}`,
			shown: []string{`  "target": "EVERYTHING"`, `  "city": "Baile Átha Cliath › ☘"`,
				`  "x\nArguments (1):\n  \"target\": \"nothing\"": "a\n  \"target\": \"nothing\"\u2028\u202e\x00"`},
			absent: []string{"\n  \"target\": \"nothing\"", "\u2028", "\u202e", "\x00"},
		},
		{
			name:   "too many arguments to show",
			args:   many(400, 10),
			refuse: "400 arguments make more than 4000 bytes even with each value cut to its first 40",
		},
		{
			name:   "an argument name too long to show",
			args:   `{"` + strings.Repeat("k", 300) + `": 1}`,
			refuse: "is over 200 bytes long, quoted",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			questions = nil
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "tairseach_demo_echo", Arguments: json.RawMessage(tt.args)})
			if err != nil {
				t.Fatal(err)
			}
			if tt.refuse != "" {
				text := check.ResultText(res)
				if len(questions) != 0 || !res.IsError || !strings.HasPrefix(text, observe.PrefixConfirmRefused) ||
					!strings.Contains(text, tt.refuse) || !strings.Contains(text, "call it again with fewer or shorter arguments") {
					t.Fatalf("asked %d times; result %q; want no question and a refusal saying %q", len(questions), text, tt.refuse)
				}
				return
			}
			if len(questions) != 1 {
				t.Fatalf("asked %d times, want once", len(questions))
			}
			q := questions[0]
			lines := strings.Split(q, "\n")
			for _, want := range tt.shown {
				found := false
				for _, l := range lines {
					found = found || strings.HasPrefix(l, want)
				}
				if !found {
					t.Errorf("no line %q in the question:\n%s", want, q)
				}
			}
			for _, bad := range tt.absent {
				if strings.Contains(q, bad) {
					t.Errorf("the question has %q:\n%s", bad, q)
				}
			}
			// Every argument's name, in the order sent.
			var root map[string]json.RawMessage
			if err := json.Unmarshal([]byte(tt.args), &root); err != nil {
				t.Fatal(err)
			}
			args := q[strings.Index(q, "\nArguments"):]
			for name := range root {
				key, _ := json.Marshal(name)
				if !strings.Contains(args, "\n  "+strings.ReplaceAll(string(key), `\u0000`, `\x00`)+": ") && !strings.Contains(args, "\n  \"x\\nArguments") {
					t.Errorf("argument %s not shown:\n%s", key, q)
				}
			}
			if len(args) > pipeline.MaxConfirmArgs+200 {
				t.Errorf("the arguments take %d bytes of the question", len(args))
			}
			// The accept sent the arguments in full.
			if res.IsError {
				t.Fatalf("accepted call: %q", check.ResultText(res))
			}
			var echoed, sent any
			if err := json.Unmarshal([]byte(check.ResultText(res)), &echoed); err != nil {
				t.Fatalf("echo %q: %v", check.ResultText(res), err)
			}
			_ = json.Unmarshal([]byte(tt.args), &sent)
			if a, b := fmt.Sprint(echoed), fmt.Sprint(sent); a != b {
				t.Errorf("the backend got %.200s…, want %.200s…", a, b)
			}
		})
	}
}
