package main

// Resources, prompts, completion and pictures driven by the npm clients:
// the TypeScript SDK (scripts/ts-features.mjs) and MCP Inspector's CLI, over
// stdio and over HTTP with the bearer token. features_e2e_test.go drives the
// same journeys with the go-sdk client.

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
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

// TestMCPInspectorResourcesPrompts drives the same journeys with MCP
// Inspector's CLI, one process per call, over stdio (a bridge per call) and
// over HTTP with the bearer token (one bridge), at 2025-11-25
// (--protocol-era legacy) and 2026-07-28 (modern). One-shot calls cannot
// wait for notifications: a new prompt file is checked by listing again.
// The CLI reports a JSON-RPC error as exit 1 and {"error":{"message"}} on
// stderr, without its numeric code; the codes are checked by the
// TypeScript SDK and go-sdk tests.
func TestMCPInspectorResourcesPrompts(t *testing.T) {
	nm := nodeModules(t)
	// Its 40 runs of the Inspector take a minute or more: it runs beside
	// the other long tests, and the only test of the Inspector then, so
	// that no two share its state in HOME.
	t.Parallel()
	inspector := filepath.Join(nm, ".bin", "mcp-inspector")
	for _, transport := range []string{"stdio", "http"} {
		for _, era := range []struct{ version, flag string }{{"2025-11-25", "legacy"}, {"2026-07-28", "modern"}} {
			t.Run(transport+"/"+era.version, func(t *testing.T) {
				fe := newFeatureEnv(t)
				startBackend(t, fe.socket)
				logPath := filepath.Join(fe.logs, "proxy.log")
				log := bigLog(t, logPath)
				logURI := resources.FileURI(logPath)
				// The server: after the options for stdio; before them for
				// HTTP, where the variadic --prompt-args would take the URL.
				var before, after []string
				if transport == "stdio" {
					after = append([]string{"--", bridgeBin}, fe.args(append(fe.flags(), "--log-level", "warn")...)...)
				} else {
					b := startHTTPDefault(t, fe.env, fe.flags()...)
					before = []string{b.url, "--transport", "http", "--header", "Authorization: Bearer " + b.token}
				}

				// inspect runs one call and returns its result, or the
				// message of its error and the exit status.
				inspect := func(args ...string) (result json.RawMessage, errMsg string, code int) {
					t.Helper()
					call := strings.Join(args, " ")
					full := append([]string{"--cli", "--protocol-era", era.flag, "--format", "json"}, before...)
					full = append(append(full, args...), after...)
					stdout, stderr, code := runNode(t, 60*time.Second, inspector, full...)
					var out struct{ Result json.RawMessage }
					if code == 0 {
						if err := json.Unmarshal([]byte(stdout), &out); err != nil || out.Result == nil {
							t.Fatalf("inspector %s: exit 0 but no result\nstdout:\n%.2000s\nstderr:\n%.2000s", call, stdout, stderr)
						}
						// A 2026-07-28 result names the server in its _meta and
						// one of 2025-11-25 does not: the revision is the one
						// asked for. (The CLI leaves _meta out of lists.)
						modern := strings.Contains(string(out.Result), `"io.modelcontextprotocol/serverInfo"`)
						if !strings.HasSuffix(args[1], "/list") && modern != (era.flag == "modern") {
							t.Errorf("inspector %s --protocol-era %s: a result of the other revision: %.300s", call, era.flag, out.Result)
						}
						return out.Result, "", 0
					}
					for _, l := range strings.Split(stderr, "\n") {
						var e struct{ Error struct{ Message string } }
						if json.Unmarshal([]byte(l), &e) == nil && e.Error.Message != "" {
							return nil, e.Error.Message, code
						}
					}
					t.Fatalf("inspector %s: exit %d without an error message\nstdout:\n%.2000s\nstderr:\n%.2000s", call, code, stdout, stderr)
					return nil, "", code
				}
				must := func(v any, args ...string) {
					t.Helper()
					res, msg, code := inspect(args...)
					if code != 0 {
						t.Fatalf("inspector %v: exit %d: %s", args, code, msg)
					}
					if err := json.Unmarshal(res, v); err != nil {
						t.Fatalf("inspector %v: %v in %.500s", args, err, res)
					}
				}

				var list struct {
					Resources []struct{ URI, MimeType string }
				}
				must(&list, "--method", "resources/list")
				var uris []string
				for _, r := range list.Resources {
					uris = append(uris, r.URI)
				}
				for _, want := range []string{logURI, resources.StatusURI, "tairseach://contacts", "tairseach://manifests/contacts"} {
					if !strings.Contains(" "+strings.Join(uris, " ")+" ", " "+want+" ") {
						t.Errorf("resources/list lacks %s: %v", want, uris)
					}
				}

				type contents struct {
					Contents []struct{ URI, MimeType, Text string }
				}
				var read contents
				must(&read, "--method", "resources/read", "--uri", logURI)
				if len(read.Contents) != 1 || read.Contents[0].URI != logURI || read.Contents[0].MimeType != "text/plain" {
					t.Fatalf("resources/read of the log: %+v", read.Contents)
				}
				checkLogTail(t, read.Contents[0].Text, log)

				var templates struct {
					ResourceTemplates []struct{ URITemplate string }
				}
				must(&templates, "--method", "resources/templates/list")
				if len(templates.ResourceTemplates) != 1 || templates.ResourceTemplates[0].URITemplate != "tairseach://contacts/{id}" {
					t.Errorf("resources/templates/list: %+v", templates)
				}

				// The template's variable reaches the socket as contacts.get's params.
				must(&read, "--method", "resources/read", "--uri", "tairseach://contacts/c-002")
				var contact struct{ ID string }
				if len(read.Contents) != 1 || json.Unmarshal([]byte(read.Contents[0].Text), &contact) != nil || contact.ID != "c-002" {
					t.Errorf("tairseach://contacts/c-002: %+v", read.Contents)
				}

				type prompts struct{ Prompts []struct{ Name string } }
				names := func() string {
					var pl prompts
					must(&pl, "--method", "prompts/list")
					var n []string
					for _, p := range pl.Prompts {
						n = append(n, p.Name)
					}
					return " " + strings.Join(n, " ") + " "
				}
				if got := names(); !strings.Contains(got, " find-contact ") || !strings.Contains(got, " day-plan ") || !strings.Contains(got, " inbox-summary ") {
					t.Errorf("prompts/list: %s", got)
				}
				var rendered tsPrompt
				must(&rendered, "--method", "prompts/get", "--prompt-name", "find-contact", "--prompt-args", "who=Ada", "channel=email")
				if len(rendered.Messages) != 1 || rendered.Messages[0].Role != "user" || rendered.Messages[0].Content.Text != findContactAda {
					t.Errorf("prompts/get find-contact: %+v", rendered)
				}

				// A new prompt file is listed (by the running HTTP bridge once
				// it has seen the file) and renders.
				if err := os.WriteFile(filepath.Join(fe.prompts, "hello.md"), []byte(helloPrompt), 0o600); err != nil {
					t.Fatal(err)
				}
				for deadline := time.Now().Add(5 * time.Second); !strings.Contains(names(), " hello "); {
					if time.Now().After(deadline) {
						t.Fatal("prompts/list does not show the new prompt file after 5s")
					}
					time.Sleep(100 * time.Millisecond)
				}
				must(&rendered, "--method", "prompts/get", "--prompt-name", "hello", "--prompt-args", "who=Ada")
				if len(rendered.Messages) != 1 || rendered.Messages[0].Content.Text != "Say hello to Ada.\n" {
					t.Errorf("prompts/get hello: %+v", rendered)
				}

				var shot struct {
					IsError bool
					Content []contentBlock
				}
				must(&shot, "--method", "tools/call", "--tool-name", "tairseach_screen_capture")
				var types []string
				for _, c := range shot.Content {
					types = append(types, c.Type)
				}
				checkShot(t, shot.IsError, firstText(shot.Content), types, func() (string, string, int) {
					for _, c := range shot.Content {
						if c.Type == "image" {
							b, err := base64.StdEncoding.DecodeString(c.Data)
							if err != nil {
								t.Errorf("the image block's data: %v", err)
							}
							sum := sha256.Sum256(b)
							return c.MimeType, hex.EncodeToString(sum[:]), len(b)
						}
					}
					return "", "", 0
				})

				for _, bad := range []struct {
					name string
					args []string
					want string
				}{
					{"unknown URI", []string{"--method", "resources/read", "--uri", "tairseach://nothing"}, "Resource not found"},
					{"escaping variable", []string{"--method", "resources/read", "--uri", "tairseach://contacts/..%2Fx"}, `template variable "id"`},
					{"dot-dot variable", []string{"--method", "resources/read", "--uri", "tairseach://contacts/.."}, `template variable "id"`},
					{"unknown prompt", []string{"--method", "prompts/get", "--prompt-name", "no-such-prompt"}, `unknown prompt "no-such-prompt"`},
					{"missing argument", []string{"--method", "prompts/get", "--prompt-name", "find-contact"}, `missing required argument "who"`},
					{"value outside the enum", []string{"--method", "prompts/get", "--prompt-name", "find-contact", "--prompt-args", "who=Ada", "channel=pigeon"}, `"channel"`},
				} {
					if _, msg, code := inspect(bad.args...); code != 1 || !strings.Contains(msg, bad.want) {
						t.Errorf("%s: exit %d, %q; want exit 1 and an error naming %s", bad.name, code, msg, bad.want)
					}
				}
			})
		}
	}
}

// contentBlock is a content block of a tool result as the Inspector prints it.
type contentBlock struct{ Type, Text, Data, MimeType string }

func firstText(cs []contentBlock) string {
	for _, c := range cs {
		if c.Type == "text" {
			return c.Text
		}
	}
	return ""
}
