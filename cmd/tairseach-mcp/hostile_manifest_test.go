package main

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Manifests whose schemas refer to themselves: {"$ref":"#"} and $defs
// a → b → a. jsonschema-go recursed on them until the process died.
const (
	selfRefManifest = `{"id":"selfref","tools":[
  {"name":"selfref.bad","inputSchema":{"type":"object","$ref":"#"}}],
 "implementation":{"type":"internal","methods":{"selfref.bad":"demo.echo"}}}`
	cycleManifest = `{"id":"cycle","tools":[
  {"name":"cycle.bad","inputSchema":{"type":"object","$ref":"#/$defs/a",
   "$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}}}}],
 "implementation":{"type":"internal","methods":{"cycle.bad":"demo.echo"}}}`
)

// closeAndWait ends the bridge's input and reports how it exited.
func closeAndWait(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	start := time.Now()
	if err := cs.Close(); err != nil {
		t.Fatalf("bridge did not exit 0 at end of input: %v (after %v)", err, time.Since(start))
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Fatalf("bridge took %v to exit at end of input", d)
	}
}

func TestE2ESelfReferentialSchemas(t *testing.T) {
	e := newEnv(t)
	e.manifests = copyExamples(t)
	for name, m := range map[string]string{"selfref.json": selfRefManifest, "cycle.json": cycleManifest} {
		if err := os.WriteFile(filepath.Join(e.manifests, name), []byte(m), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	startBackend(t, e.socket)
	cs := connect(t, e, "2025-11-25")

	names := toolNames(t, cs)
	for _, bad := range []string{"tairseach_selfref_bad", "tairseach_cycle_bad"} {
		if slices.Contains(names, bad) {
			t.Errorf("tools/list has %s, whose schema refers to itself", bad)
		}
	}
	if !slices.Contains(names, "tairseach_demo_echo") {
		t.Fatalf("tools/list = %v, want tairseach_demo_echo", names)
	}
	for range 2 {
		if res := callTool(t, cs, "tairseach_demo_echo", map[string]any{"x": 1.0}); res.IsError {
			t.Fatalf("good tool: %s", text(res))
		}
		for _, bad := range []string{"tairseach_selfref_bad", "tairseach_cycle_bad"} {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: bad, Arguments: map[string]any{"x": 1}})
			if err == nil && !res.IsError {
				t.Fatalf("calling %s succeeded: %s", bad, text(res))
			}
		}
	}
	closeAndWait(t, cs)

	// validate names both files with a position and exits 1.
	out, err := exec.Command(bridgeBin, "validate", e.manifests).Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("validate: %v, want exit status 1\n%s", err, out)
	}
	for _, file := range []string{"selfref.json", "cycle.json"} {
		re := regexp.MustCompile(regexp.QuoteMeta(filepath.Join(e.manifests, file)) + `:\d+:\d+: error: tool \S+ is not exposed: its inputSchema cannot be used: \$ref cycle`)
		if !re.Match(out) {
			t.Errorf("validate output does not report %s with a line and column:\n%s", file, out)
		}
	}
}

// TestE2ESpecialFiles puts a FIFO, a symbolic link to /dev/zero, a socket
// and a directory named like manifests in the directory at start and while
// it is reloaded, swapping a manifest for a FIFO over and over: tools/list
// still answers and end of input still ends the bridge.
func TestE2ESpecialFiles(t *testing.T) {
	e := newEnv(t)
	e.manifests = copyExamples(t)
	special := func(prefix string) {
		t.Helper()
		dir := e.manifests
		if err := syscall.Mkfifo(filepath.Join(dir, prefix+"fifo.json"), 0o644); err != nil {
			t.Fatalf("mkfifo: %v", err)
		}
		if err := os.Symlink("/dev/zero", filepath.Join(dir, prefix+"zero.json")); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(dir, prefix+"dir.json"), 0o755); err != nil {
			t.Fatal(err)
		}
		l, err := net.Listen("unix", filepath.Join(dir, prefix+"s.json"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
	}
	special("")
	startBackend(t, e.socket)
	cs := connect(t, e, "2025-11-25", "--drain-timeout", "1s")
	if names := toolNames(t, cs); !slices.Contains(names, "tairseach_demo_echo") {
		t.Fatalf("tools/list = %v", names)
	}

	// During reloads: new special files, and a manifest swapped with a FIFO
	// as fast as possible.
	special("late-")
	swap := filepath.Join(e.manifests, "swap.json")
	deadline := time.Now().Add(2 * time.Second)
	for i := 0; time.Now().Before(deadline); i++ {
		tmp := filepath.Join(e.manifests, ".swap.tmp")
		if i%2 == 0 {
			if err := os.WriteFile(tmp, []byte(extraManifest), 0o644); err != nil {
				t.Fatal(err)
			}
		} else if err := syscall.Mkfifo(tmp, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, swap); err != nil {
			t.Fatal(err)
		}
		if i%50 == 0 {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_, err := cs.ListTools(ctx, nil)
			cancel()
			if err != nil {
				t.Fatalf("tools/list during reloads: %v", err)
			}
		}
	}
	// Leave the FIFO in place, let the last reload happen, then list again.
	if err := syscall.Mkfifo(filepath.Join(e.manifests, ".swap.tmp"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(e.manifests, ".swap.tmp"), swap); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	names := toolNames(t, cs)
	if !slices.Contains(names, "tairseach_demo_echo") || slices.ContainsFunc(names, func(n string) bool { return strings.Contains(n, "extra") }) {
		t.Fatalf("tools/list after the swaps = %v, want the examples without extra.echo", names)
	}
	closeAndWait(t, cs)
}

// TestE2EScriptTool calls the script tool of manifests.example, which has
// toolBindings and no methods, through the bridge: the backend receives the
// tool name as the method, as the real server expects.
func TestE2EScriptTool(t *testing.T) {
	e := newEnv(t)
	startBackend(t, e.socket)
	cs := connect(t, e, "2025-11-25")
	if names := toolNames(t, cs); !slices.Contains(names, "tairseach_word_count") {
		t.Fatalf("tools/list = %v, want tairseach_word_count", names)
	}
	res := callTool(t, cs, "tairseach_word_count", map[string]any{"text": "three little words\nand two"})
	if res.IsError {
		t.Fatalf("word_count: %s", text(res))
	}
	// The result is the text (outputSchemas are only checked by default).
	var got any
	if err := json.Unmarshal([]byte(text(res)), &got); err != nil {
		t.Fatalf("word_count text %q: %v", text(res), err)
	}
	want := map[string]any{"words": 5.0, "lines": 2.0, "characters": 26.0}
	if !jsonEqual(got, want) {
		t.Fatalf("word_count = %s, want %v", text(res), want)
	}
	// Its inputSchema is enforced like any other tool's.
	if res := callTool(t, cs, "tairseach_word_count", map[string]any{}); !res.IsError {
		t.Fatalf("word_count without text succeeded: %s", text(res))
	}
}

// TestE2EHostileManifests loads a directory of hostile manifests and
// entries: the bridge starts, lists only well-formed tools whose every
// string is valid UTF-8 and whose names are valid MCP names, serves a good
// tool, and exits 0 at end of input.
func TestE2EHostileManifests(t *testing.T) {
	e := newEnv(t)
	e.manifests = copyExamples(t)
	dir := e.manifests
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Invalid UTF-8 and control characters in names, titles and descriptions.
	write("utf8.json", "{\"id\":\"u\",\"tools\":[{\"name\":\"bad\xffname\\u0007\",\"title\":\"t\xc3\",\"description\":\"d\xed\xa0\x80 \\ud800 \\u0000 end\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"p\xfe\":{\"description\":\"\xff\"}}}}],"+
		"\"implementation\":{\"methods\":{\"bad\xffname\\u0007\":\"demo.echo\"}}}")
	// Names that collide after sanitising, in one file and with demo.json,
	// which sorts first and keeps the name.
	write("zcollide.json", `{"id":"c","tools":[{"name":"demo.echo"},{"name":"demo_echo"},{"name":"demo echo"}],"implementation":{"methods":{"demo.echo":"demo.slow","demo_echo":"demo.fail","demo echo":"demo.echo"}}}`)
	// Duplicate keys, a byte order mark, a name made only of symbols.
	write("dupkeys.json", "\xef\xbb\xbf"+`{"id":"d","id":"d2","tools":[{"name":"dup","name":"dup2"},{"name":"duptype","inputSchema":{"type":"object","type":"string"}},{"name":"!!!"}],"implementation":{"methods":{"dup2":"demo.echo","duptype":"demo.echo","!!!":"demo.echo"}}}`)
	// Nesting beyond encoding/json's limit, and a schema nested beyond ours.
	write("deep.json", `{"id":"deep","tools":[{"name":"deep","annotations":{"x":`+strings.Repeat("[", 20000)+strings.Repeat("]", 20000)+`}}]}`)
	write("deepschema.json", `{"id":"ds","tools":[{"name":"ds","inputSchema":{"type":"object"`+strings.Repeat(`,"properties":{"a":{"type":"object"`, 200)+strings.Repeat("}}", 200)+`}}],"implementation":{"methods":{"ds":"demo.echo"}}}`)
	// A symbolic link loop, a link out of the tree, a dangling link, deep directories.
	if err := os.Symlink(".", filepath.Join(dir, "loop")); err != nil {
		t.Fatal(err)
	}
	outside := shortDir(t)
	if err := os.WriteFile(filepath.Join(outside, "out.json"), []byte(`{"id":"out","tools":[{"name":"out.echo"}],"implementation":{"methods":{"out.echo":"demo.echo"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "linked")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "nope.json"), filepath.Join(dir, "dangling.json")); err != nil {
		t.Fatal(err)
	}
	write(strings.Repeat("d/", 100)+"deepdir.json", `{"id":"dd","tools":[{"name":"deepdir.echo"}],"implementation":{"methods":{"deepdir.echo":"demo.echo"}}}`)

	startBackend(t, e.socket)
	cs := connect(t, e, "2025-11-25", "--drain-timeout", "1s")
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		b, err := json.Marshal(tool)
		if err != nil {
			t.Fatal(err)
		}
		if !utf8.Valid(b) || !validToolName.MatchString(tool.Name) {
			t.Errorf("tool %q: invalid name or UTF-8: %s", tool.Name, b)
		}
	}
	for _, want := range []string{"tairseach_demo_echo", "tairseach_out_echo", "tairseach_deepdir_echo", "tairseach_dup2", "tairseach____"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}
	// A name with a control character is not taken (its words would reach
	// messages); invalid UTF-8 alone is repaired where it is shown.
	for _, unwanted := range []string{"tairseach_deep", "tairseach_ds", "tairseach_dup", "tairseach_duptype", "tairseach_bad_name_"} {
		if slices.Contains(names, unwanted) {
			t.Errorf("tools/list has %s", unwanted)
		}
	}
	// demo.echo of demo.json keeps its name; the colliding tools do not take it over.
	if res := callTool(t, cs, "tairseach_demo_echo", map[string]any{"k": "v"}); res.IsError || text(res) != `{"k":"v"}` {
		t.Fatalf("tairseach_demo_echo: isError %v, %s", res.IsError, text(res))
	}
	closeAndWait(t, cs)
}

var validToolName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// TestE2EManifestDirReplaced removes the manifests directory while the
// bridge watches it, brings it back as a symbolic link to another
// directory, then renames it away: tools/list always answers and follows,
// and end of input ends the bridge.
func TestE2EManifestDirReplaced(t *testing.T) {
	e := newEnv(t)
	e.manifests = copyExamples(t)
	startBackend(t, e.socket)
	notes := make(chan struct{}, 64)
	cs := connectWith(t, e, "2025-11-25", &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case notes <- struct{}{}:
			default:
			}
		},
	}, "--drain-timeout", "1s")
	waitTools := func(what string, ok func([]string) bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			names := toolNames(t, cs)
			if ok(names) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: tools/list = %v", what, names)
			}
			select {
			case <-notes:
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	has := func(name string) func([]string) bool {
		return func(names []string) bool { return slices.Contains(names, name) }
	}
	waitTools("start", has("tairseach_demo_echo"))

	if err := os.RemoveAll(e.manifests); err != nil {
		t.Fatal(err)
	}
	waitTools("directory removed", func(names []string) bool { return len(names) == 0 })

	other := filepath.Join(shortDir(t), "other")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "extra.json"), []byte(extraManifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, e.manifests); err != nil {
		t.Fatal(err)
	}
	waitTools("directory back as a symbolic link", has("tairseach_extra_echo"))
	if res := callTool(t, cs, "tairseach_extra_echo", map[string]any{"k": "v"}); res.IsError {
		t.Fatalf("extra.echo: %s", text(res))
	}

	if err := os.Rename(e.manifests, e.manifests+".old"); err != nil {
		t.Fatal(err)
	}
	waitTools("directory renamed away", func(names []string) bool { return len(names) == 0 })
	closeAndWait(t, cs)
}

// TestValidateSpecialFileArgs: validate given a FIFO or /dev/zero as a FILE
// refuses it at once, instead of blocking on the FIFO or reading for ever.
func TestValidateSpecialFileArgs(t *testing.T) {
	dir := shortDir(t)
	fifo := filepath.Join(dir, "pipe.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	for _, arg := range []string{fifo, "/dev/zero"} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		out, err := exec.CommandContext(ctx, bridgeBin, "validate", arg).CombinedOutput()
		cancel()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Fatalf("validate %s: %v, want exit status 1\n%s", arg, err, out)
		}
		if !strings.Contains(string(out), arg+": error: reading file: not a regular file") {
			t.Errorf("validate %s:\n%s", arg, out)
		}
	}
}

// TestStdioToolsListValidUTF8 reads tools/list from the real binary's stdout
// as bytes: invalid UTF-8 in a manifest's names, texts and schemas never
// reaches the wire.
func TestStdioToolsListValidUTF8(t *testing.T) {
	dir := shortDir(t)
	manifests := filepath.Join(dir, "manifests")
	if err := os.Mkdir(manifests, 0o755); err != nil {
		t.Fatal(err)
	}
	m := "{\"id\":\"u\xff\",\"tools\":[{\"name\":\"bad\xffname\",\"title\":\"t\xc3\",\"description\":\"d\xed\xa0\x80\",\"annotations\":{\"title\":\"a\xfe\"}," +
		"\"inputSchema\":{\"type\":\"object\",\"properties\":{\"p\xfe\":{\"type\":\"string\",\"description\":\"\xff\",\"enum\":[\"\xc0\xaf\"]}}}," +
		"\"outputSchema\":{\"type\":\"object\",\"title\":\"o\xff\"}}],\"implementation\":{\"methods\":{\"bad\xffname\":\"demo.echo\"}}}"
	if err := os.WriteFile(filepath.Join(manifests, "utf8.json"), []byte(m), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startRaw(t, "--manifests", manifests, "--socket", filepath.Join(dir, "s.sock"))
	s.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	for {
		select {
		case l, ok := <-s.lines:
			if !ok {
				t.Fatal("stdout closed before the tools/list response")
			}
			if !utf8.ValidString(l) {
				t.Fatalf("invalid UTF-8 on stdout: %q", l)
			}
			var msg struct {
				ID     *int `json:"id"`
				Result struct {
					Tools []json.RawMessage `json:"tools"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(l), &msg); err != nil {
				t.Fatalf("stdout line is not JSON: %q", l)
			}
			if msg.ID != nil && *msg.ID == 1 {
				if len(msg.Result.Tools) != 2 { // the tool and tairseach_result_part
					t.Fatalf("tools/list: %s", l)
				}
				return
			}
		case <-time.After(20 * time.Second):
			t.Fatal("no tools/list response within 20s")
		}
	}
}
