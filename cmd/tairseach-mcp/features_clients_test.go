package main

// Resources, prompts, completion and pictures driven by the npm clients:
// the TypeScript SDK (scripts/ts-features.mjs) and MCP Inspector's CLI, over
// stdio and over HTTP with the bearer token. features_e2e_test.go drives the
// same journeys with the go-sdk client.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/geilt/tairseach-mcp/mcpserver/resources"
)

// bigLog writes a log of 300 KiB at path and returns its text: served with
// --resource-max-bytes 65536, a read returns its last 64 KiB from a line.
func bigLog(t *testing.T, path string) string {
	t.Helper()
	var log bytes.Buffer
	for i := 0; log.Len() < 300<<10; i++ {
		log.WriteString(strings.Repeat("x", 50) + " line " + itoa(i) + "\n")
	}
	if err := os.WriteFile(path, log.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return log.String()
}

// checkLogTail checks a read of the log written by bigLog.
func checkLogTail(t *testing.T, got, log string) {
	t.Helper()
	if !strings.HasPrefix(got, "[the first ") || !strings.HasSuffix(got, log[len(log)-200:]) || len(got) > 65536+200 {
		t.Errorf("log read: %d bytes, starting %q; want its last 64 KiB after a line saying what was left out", len(got), got[:min(len(got), 120)])
	}
}

const helloPrompt = "---\ndescription: say hello\narguments:\n  - name: who\n    required: true\n---\nSay hello to {{who}}.\n"

const findContactAda = "Find Ada in my contacts with the tairseach_contacts_search tool.\nIf there is more than one match, list them briefly and ask which one I mean.\nFor the contact found, tell me how to reach them by email (if that is\nempty, show every email address and phone number).\n"

// tsFeatures is the last line scripts/ts-features.mjs prints.
type tsFeatures struct {
	ProtocolVersion string
	Capabilities    struct {
		Resources struct{ Subscribe, ListChanged bool }
		Prompts   struct{ ListChanged bool }
	}
	Resources []string
	Templates []struct{ URITemplate, Name string }
	Log       struct{ URI, Text, MimeType string }
	Prompts   []string
	NewPrompt tsAttempt[tsPrompt]
	// FindContact is find-contact rendered with who=Ada, channel=email.
	FindContact tsAttempt[tsPrompt]
	Contact     tsAttempt[struct {
		Contents []struct{ URI, Text, MimeType string }
	}]
	Bad  map[string]tsAttempt[json.RawMessage]
	Shot struct {
		IsError bool
		Types   []string
		Text    string
		Images  []struct {
			MimeType, Sha256 string
			Size             int
		}
	}
	Completion tsAttempt[struct {
		Completion struct{ Values []string }
	}]
}

type tsPrompt struct {
	Messages []struct {
		Role    string
		Content struct{ Type, Text string }
	}
}

// tsAttempt is a request's result, or its JSON-RPC error.
type tsAttempt[T any] struct {
	Result  *T
	Code    int
	Message string
}

// TestTypeScriptSDKResourcesPrompts is the journey of
// TestE2EResourcesPromptsImages with the TypeScript SDK client, over stdio
// and over HTTP with the bearer token. The SDK (1.32) speaks 2025-11-25 at
// most: it offers that revision and refuses a server that answers another,
// so 2026-07-28 is covered by the go-sdk client and MCP Inspector's CLI.
func TestTypeScriptSDKResourcesPrompts(t *testing.T) {
	nodeModules(t)
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			fe := newFeatureEnv(t)
			startBackend(t, fe.socket)
			logPath := filepath.Join(fe.logs, "proxy.log")
			log := bigLog(t, logPath)
			logURI := resources.FileURI(logPath)

			spec := map[string]any{"log": logURI, "prompt": "hello"}
			if transport == "stdio" {
				spec["stdio"] = map[string]any{"command": bridgeBin, "args": fe.args(append(fe.flags(), "--log-level", "warn")...)}
			} else {
				b := startHTTPDefault(t, fe.env, fe.flags()...)
				spec["http"] = map[string]any{"url": b.url, "headers": map[string]string{"Authorization": "Bearer " + b.token}}
			}
			raw, _ := json.Marshal(spec)
			cmd, lines := startNode(t, "ts-features.mjs", string(raw))
			step := func(want string) map[string]any {
				t.Helper()
				var m map[string]any
				l := readLine(t, lines, 30*time.Second)
				if json.Unmarshal([]byte(l), &m) != nil || m["step"] != want {
					t.Fatalf("ts-features: %q, want step %q", l, want)
				}
				return m
			}

			step("subscribed")
			f, err := os.OpenFile(logPath, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			appended := time.Now()
			f.WriteString("one more line\n")
			f.Close()
			if u := step("updated"); u["uri"] != logURI {
				t.Errorf("updated %v, want %s", u["uri"], logURI)
			}
			if d := time.Since(appended); d > time.Second {
				t.Errorf("notifications/resources/updated %s after the append, want within a second", d)
			}

			step("prompts-listed")
			if err := os.WriteFile(filepath.Join(fe.prompts, "hello.md"), []byte(helloPrompt), 0o600); err != nil {
				t.Fatal(err)
			}
			step("prompt-listed")

			var out tsFeatures
			l := readLine(t, lines, 30*time.Second)
			if err := json.Unmarshal([]byte(l), &out); err != nil {
				t.Fatalf("ts-features output %.500q: %v", l, err)
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("ts-features: %v", err)
			}

			if out.ProtocolVersion != "2025-11-25" {
				t.Errorf("negotiated %q, want 2025-11-25", out.ProtocolVersion)
			}
			if c := out.Capabilities; !c.Resources.Subscribe || !c.Resources.ListChanged || !c.Prompts.ListChanged {
				t.Errorf("capabilities as the TypeScript SDK saw them: %+v", c)
			}
			for _, want := range []string{logURI, resources.StatusURI, "tairseach://contacts", "tairseach://manifests/contacts"} {
				if !strings.Contains(strings.Join(out.Resources, " "), want) {
					t.Errorf("resources/list lacks %s: %v", want, out.Resources)
				}
			}
			if len(out.Templates) != 1 || out.Templates[0].URITemplate != "tairseach://contacts/{id}" {
				t.Errorf("resources/templates/list: %+v", out.Templates)
			}
			if out.Log.URI != logURI || out.Log.MimeType != "text/plain" {
				t.Errorf("log read: uri %s, mimeType %s", out.Log.URI, out.Log.MimeType)
			}
			checkLogTail(t, out.Log.Text, log)

			if r := out.NewPrompt.Result; r == nil || len(r.Messages) != 1 || r.Messages[0].Content.Text != "Say hello to Ada.\n" {
				t.Errorf("prompts/get of the new prompt file: %+v", out.NewPrompt)
			}
			if r := out.FindContact.Result; r == nil || len(r.Messages) != 1 || r.Messages[0].Role != "user" || r.Messages[0].Content.Text != findContactAda {
				t.Errorf("prompts/get find-contact: %+v", out.FindContact)
			}

			var contact struct{ ID, FullName string }
			if r := out.Contact.Result; r == nil || len(r.Contents) != 1 || json.Unmarshal([]byte(r.Contents[0].Text), &contact) != nil ||
				contact.ID != "c-002" || r.Contents[0].MimeType != "application/json" {
				t.Errorf("tairseach://contacts/c-002: %+v", out.Contact)
			}

			for name, want := range map[string]string{
				"unknownURI":    "Resource not found",
				"escapeEncoded": `"id"`,
				"escapeDots":    `"id"`,
				"escapeSlash":   "",
				"escapeQuery":   "", // an encoded "?" matches no template: not found

				"unknownPrompt":      "no-such-prompt",
				"missingArgument":    `"who"`,
				"undeclaredArgument": `"colour"`,
				"outsideEnum":        `"channel"`,
			} {
				got, ok := out.Bad[name]
				if !ok || got.Result != nil || got.Code != -32602 || !strings.Contains(got.Message, want) {
					t.Errorf("%s: %+v; want error -32602 naming %s", name, got, want)
				}
			}

			checkShot(t, out.Shot.IsError, out.Shot.Text, out.Shot.Types, func() (string, string, int) {
				if len(out.Shot.Images) != 1 {
					return "", "", 0
				}
				i := out.Shot.Images[0]
				return i.MimeType, i.Sha256, i.Size
			})

			if r := out.Completion.Result; r == nil || len(r.Completion.Values) == 0 || !strings.HasPrefix(r.Completion.Values[0], "c-") {
				t.Errorf("completion of tairseach://contacts/{id}: %+v", out.Completion)
			}
		})
	}
}

// checkShot checks what a client saw of screen.capture: a text block with
// the path, then an image block that decodes to the file's bytes.
func checkShot(t *testing.T, isError bool, text string, types []string, image func() (mimeType, sha string, size int)) {
	t.Helper()
	var shot struct{ Path string }
	if isError || json.Unmarshal([]byte(text), &shot) != nil || shot.Path == "" || strings.Join(types, ",") != "text,image" {
		t.Errorf("screen.capture: isError %v, blocks %v, text %q", isError, types, text)
		return
	}
	t.Cleanup(func() { os.Remove(shot.Path) })
	want, err := os.ReadFile(shot.Path)
	if err != nil || len(want) == 0 {
		t.Fatalf("the demo backend's picture: %v", err)
	}
	sum := sha256.Sum256(want)
	mime, sha, size := image()
	if mime != "image/png" || sha != hex.EncodeToString(sum[:]) || size != len(want) {
		t.Errorf("screen.capture image block: %s, %d bytes, sha256 %s; want image/png, the file's %d bytes", mime, size, sha, len(want))
	}
}
