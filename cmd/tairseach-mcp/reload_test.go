package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// copyExamples copies manifests.example into a fresh directory the test may edit.
func copyExamples(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(shortDir(t), "manifests")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(repoRoot, "manifests.example"))); err != nil {
		t.Fatal(err)
	}
	return dir
}

const extraManifest = `{"manifest_version":"1.0.0","id":"extra","name":"Extra","tools":[
 {"name":"extra.echo","description":"Echo, added while the server runs.","inputSchema":{"type":"object"}}],
 "implementation":{"type":"internal","methods":{"extra.echo":"demo.echo"}}}`

// writeAtomic saves a file the way editors do: write a temporary file, rename it over.
func writeAtomic(t *testing.T, path, content string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), ".tmp-"+filepath.Base(path))
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	return names
}

func TestE2EHotReload(t *testing.T) {
	for _, proto := range protocols {
		t.Run(protoName(proto), func(t *testing.T) {
			t.Parallel() // each its own backend and manifests; most of its time waits out the windows below
			e := newEnv(t)
			e.manifests = copyExamples(t)
			startBackend(t, e.socket)
			notes := make(chan struct{}, 16)
			cs := connectWith(t, e, proto, &mcp.ClientOptions{
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { notes <- struct{}{} },
			})
			waitNote := func(what string, want bool) {
				t.Helper()
				limit := time.Second
				if !want {
					limit = 600 * time.Millisecond
				}
				select {
				case <-notes:
					if !want {
						t.Fatalf("%s: got notifications/tools/list_changed, want none", what)
					}
				case <-time.After(limit):
					if want {
						t.Fatalf("%s: no notifications/tools/list_changed within %v", what, limit)
					}
				}
			}
			if names := toolNames(t, cs); slices.Contains(names, "tairseach_extra_echo") {
				t.Fatal("extra tool present before it was written")
			}

			// A new file: notified within 1 s, the new tool listed and callable.
			extra := filepath.Join(e.manifests, "extra.json")
			writeAtomic(t, extra, extraManifest)
			waitNote("new manifest", true)
			if names := toolNames(t, cs); !slices.Contains(names, "tairseach_extra_echo") {
				t.Fatalf("after adding extra.json, tools/list = %v", names)
			}
			if res := callTool(t, cs, "tairseach_extra_echo", map[string]any{"x": 1.0}); res.IsError || text(res) != `{"x":1}` {
				t.Fatalf("calling the new tool: isError %v, %s", res.IsError, text(res))
			}

			// The same bytes again: nothing to tell.
			writeAtomic(t, extra, extraManifest)
			waitNote("unchanged rewrite", false)

			// A broken edit keeps the last good tools.
			writeAtomic(t, extra, `{"id":"extra","tools":[`)
			waitNote("broken edit", false)
			if names := toolNames(t, cs); !slices.Contains(names, "tairseach_extra_echo") {
				t.Fatalf("a broken edit dropped the file's tools: %v", names)
			}

			// A description change is a visible change.
			writeAtomic(t, extra, strings.Replace(extraManifest, "added while", "changed while", 1))
			waitNote("changed description", true)

			// Deleting the file removes its tools.
			if err := os.Remove(extra); err != nil {
				t.Fatal(err)
			}
			waitNote("deleted manifest", true)
			if names := toolNames(t, cs); slices.Contains(names, "tairseach_extra_echo") {
				t.Fatalf("after deleting extra.json, tools/list = %v", names)
			}
		})
	}
}

func TestE2EReloadOnSIGHUP(t *testing.T) {
	e := newEnv(t)
	e.manifests = copyExamples(t)
	notes := make(chan struct{}, 4)
	cs, cmd := connectCmd(t, e, "2025-11-25", &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { notes <- struct{}{} },
	})
	// The manifests load after initialize: wait for them, so that the
	// edit below is not part of the first load.
	if names := toolNames(t, cs); !slices.Contains(names, "tairseach_server_status") {
		t.Fatalf("tools/list = %v", names)
	}
	// A hard link edited from outside the watched tree changes the file
	// without any event inside it: only SIGHUP can tell the server.
	outside := filepath.Join(shortDir(t), "server.json")
	inside := filepath.Join(e.manifests, "server.json")
	if err := os.Link(inside, outside); err != nil {
		t.Skipf("hard links unavailable: %v", err)
	}
	data, _ := os.ReadFile(outside)
	if err := os.WriteFile(outside, []byte(strings.ReplaceAll(string(data), `"server.status"`, `"server.status2"`)), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case <-notes:
		t.Skip("this file system reported the change through the hard link; nothing left for SIGHUP to prove")
	case <-time.After(400 * time.Millisecond):
	}
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case <-notes:
	case <-time.After(2 * time.Second):
		t.Fatal("no notifications/tools/list_changed within 2s of SIGHUP")
	}
	if names := toolNames(t, cs); !slices.Contains(names, "tairseach_server_status2") {
		t.Fatalf("after SIGHUP, tools/list = %v", names)
	}
}

func TestTypeScriptSDKClientListChanged(t *testing.T) {
	nodeModules(t)
	e := newEnv(t)
	e.manifests = copyExamples(t)
	startBackend(t, e.socket)
	args := append([]string{"ts-client.mjs", "list-changed", bridgeBin}, e.args()...)
	cmd, stdout := startNode(t, args...)
	// Wait for the client to be connected, then change the manifests.
	if line := readLine(t, stdout, 20*time.Second); !strings.Contains(line, `"ready":true`) {
		t.Fatalf("ts-client said %q, want ready", line)
	}
	writeAtomic(t, filepath.Join(e.manifests, "extra.json"), extraManifest)
	line := readLine(t, stdout, 10*time.Second)
	var out struct{ Tools, ToolsAfter []string }
	if err := json.Unmarshal([]byte(line), &out); err != nil {
		t.Fatalf("ts-client output %q: %v", line, err)
	}
	if slices.Contains(out.Tools, "tairseach_extra_echo") || !slices.Contains(out.ToolsAfter, "tairseach_extra_echo") {
		t.Fatalf("TypeScript SDK client: tools before %v, after list_changed %v", out.Tools, out.ToolsAfter)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("ts-client: %v", err)
	}
}
