package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/mcpserver/resources"
)

// featureEnv is a serve of the examples with a log directory and prompt
// files.
type featureEnv struct {
	env
	logs, prompts string
}

func newFeatureEnv(t *testing.T) featureEnv {
	t.Helper()
	e := newEnv(t)
	dir := shortDir(t)
	fe := featureEnv{env: e, logs: filepath.Join(dir, "logs"), prompts: filepath.Join(dir, "prompts")}
	fe.manifests = filepath.Join(dir, "manifests")
	if err := os.CopyFS(fe.manifests, os.DirFS(filepath.Join(repoRoot, "manifests.example"))); err != nil {
		t.Fatal(err)
	}
	// The prompt files are not manifests; serve them from their own directory.
	if err := os.RemoveAll(filepath.Join(fe.manifests, "prompts")); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(fe.prompts, os.DirFS(filepath.Join(repoRoot, "manifests.example", "prompts"))); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(fe.logs, 0o700); err != nil {
		t.Fatal(err)
	}
	return fe
}

func (fe featureEnv) flags() []string {
	return []string{"--logs-dir", fe.logs, "--prompts-dir", fe.prompts, "--resource-max-bytes", "65536"}
}

func TestE2EResourcesPromptsImages(t *testing.T) {
	for _, proto := range protocols {
		t.Run(protoName(proto), func(t *testing.T) {
			fe := newFeatureEnv(t)
			startBackend(t, fe.socket)

			// A log of 300 KiB: a read returns its last 64 KiB from a line.
			logPath := filepath.Join(fe.logs, "proxy.log")
			var log bytes.Buffer
			for i := 0; log.Len() < 300<<10; i++ {
				log.WriteString(strings.Repeat("x", 50) + " line " + itoa(i) + "\n")
			}
			if err := os.WriteFile(logPath, log.Bytes(), 0o600); err != nil {
				t.Fatal(err)
			}

			updated := make(chan string, 16)
			promptsChanged := make(chan struct{}, 16)
			cs := connectWith(t, fe.env, proto, &mcp.ClientOptions{
				ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
					updated <- r.Params.URI
				},
				PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) {
					promptsChanged <- struct{}{}
				},
			}, fe.flags()...)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()

			uri := resources.FileURI(logPath)
			list, err := cs.ListResources(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !hasResource(list.Resources, uri) || !hasResource(list.Resources, resources.StatusURI) {
				t.Fatalf("resources/list lacks the log or the status: %+v", list.Resources)
			}
			rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			if err != nil {
				t.Fatal(err)
			}
			got := rr.Contents[0].Text
			if !strings.HasPrefix(got, "[the first ") || !strings.HasSuffix(got, log.String()[log.Len()-200:]) || len(got) > 65536+200 {
				t.Fatalf("log read: %d bytes, starting %q", len(got), got[:min(len(got), 120)])
			}

			// Subscribe, append: updated within a second.
			if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond) // a 2026-07-28 listen is acknowledged asynchronously
			f, err := os.OpenFile(logPath, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			appended := time.Now()
			f.WriteString("one more line\n")
			f.Close()
			select {
			case u := <-updated:
				if u != uri {
					t.Fatalf("updated %s, want %s", u, uri)
				}
				if d := time.Since(appended); d > time.Second {
					t.Fatalf("updated after %s", d)
				}
			case <-time.After(time.Second):
				t.Fatal("no notifications/resources/updated within a second of the append")
			}

			// A new prompt file: list_changed.
			if _, err := cs.ListPrompts(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(fe.prompts, "hello.md"), []byte("---\ndescription: say hello\narguments:\n  - name: who\n    required: true\n---\nSay hello to {{who}}.\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			// The manifests' own prompts may announce themselves first.
			deadline := time.After(3 * time.Second)
			for listed := false; !listed; {
				select {
				case <-promptsChanged:
				case <-deadline:
					t.Fatal("no notifications/prompts/list_changed bringing the new prompt file")
				}
				pl, err := cs.ListPrompts(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range pl.Prompts {
					listed = listed || p.Name == "hello"
				}
			}
			gp, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "hello", Arguments: map[string]string{"who": "Ada"}})
			if err != nil {
				t.Fatal(err)
			}
			if tc, ok := gp.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != "Say hello to Ada.\n" {
				t.Fatalf("prompts/get: %+v", gp.Messages[0].Content)
			}
			_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "find-contact"})
			var je *jsonrpc.Error
			if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(je.Message, `"who"`) {
				t.Fatalf("prompts/get without a required argument: %v", err)
			}

			// A template resource reaches the socket with its variable as params.
			rr, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "tairseach://contacts/c-002"})
			if err != nil {
				t.Fatal(err)
			}
			var contact struct{ ID string }
			if json.Unmarshal([]byte(rr.Contents[0].Text), &contact); contact.ID != "c-002" {
				t.Fatalf("tairseach://contacts/c-002 read %s", rr.Contents[0].Text)
			}
			_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "tairseach://contacts/..%2Fx"})
			if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams {
				t.Fatalf("an escaping variable: %v", err)
			}
			_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "tairseach://nothing"})
			if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || je.Message != "Resource not found" {
				t.Fatalf("an unknown URI: %v", err)
			}

			// The status says the socket answers and carries server.status.
			rr, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: resources.StatusURI})
			if err != nil {
				t.Fatal(err)
			}
			var st resources.Status
			if json.Unmarshal([]byte(rr.Contents[0].Text), &st); !st.Answers || !strings.Contains(string(st.Server), `"status":"ok"`) || len(st.Served) == 0 {
				t.Fatalf("status: %s", rr.Contents[0].Text)
			}

			// screen.capture: an image block with the file's bytes.
			res := callTool(t, cs, "tairseach_screen_capture", map[string]any{})
			var shot struct{ Path string }
			if res.IsError || json.Unmarshal([]byte(text(res)), &shot) != nil || len(res.Content) != 2 {
				t.Fatalf("screen.capture: %+v", res.Content)
			}
			t.Cleanup(func() { os.Remove(shot.Path) })
			img, ok := res.Content[1].(*mcp.ImageContent)
			want, _ := os.ReadFile(shot.Path)
			if !ok || img.MIMEType != "image/png" || !bytes.Equal(img.Data, want) || len(want) == 0 {
				t.Fatalf("screen.capture image block: %T", res.Content[1])
			}

			// Completion of a template variable from contacts.search.
			cr, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "tairseach://contacts/{id}"},
				Argument: mcp.CompleteParamsArgument{Name: "id", Value: "a"}})
			if err != nil || len(cr.Completion.Values) == 0 || !strings.HasPrefix(cr.Completion.Values[0], "c-") {
				t.Fatalf("completion: %+v, %v", cr, err)
			}
		})
	}
}

func hasResource(rs []*mcp.Resource, uri string) bool {
	for _, r := range rs {
		if r.URI == uri {
			return true
		}
	}
	return false
}
