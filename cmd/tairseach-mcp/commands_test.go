package main

// Tests of the inspection commands (tools, validate, call, doctor,
// completion): golden files of their output against manifests.example and
// the real corpus, run in-process through run(), and a few through the real
// binary. `go test -run TestGolden -update` rewrites the golden files.

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata, and the docs made from the code")

// corpusDir holds the real Tairseach manifests, kept as the manifest
// package's test data.
var corpusDir = filepath.Join("..", "..", "manifest", "testdata", "tairseach-manifests")

// exampleDir is manifests.example, relative so that output is stable.
var exampleDir = filepath.Join("..", "..", "manifests.example")

// typedDir has one tool with a property of each JSON type.
var typedDir = filepath.Join("testdata", "typed")

// fixedSocket is a socket path for output that never connects: it is not a
// temporary path, so tables stay aligned the same way on every run.
const fixedSocket = "/run/tairseach-test/tairseach.sock"

func requireCorpus(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(corpusDir); err != nil {
		t.Fatalf("manifest corpus not found at %s: %v", corpusDir, err)
	}
}

// cleanEnv keeps the caller's environment out of the commands' flags.
func cleanEnv(t *testing.T) {
	t.Helper()
	for _, k := range []string{"TAIRSEACH_MANIFESTS", "TAIRSEACH_SOCKET", "TAIRSEACH_MCP_LOG_LEVEL", "TAIRSEACH_MCP_PREFIX", "TAIRSEACH_MCP_OUTPUT_SCHEMAS"} {
		t.Setenv(k, "")
	}
	t.Setenv("TAIRSEACH_LOGS", "")
	t.Setenv("TAIRSEACH_PROMPTS", "")
}

// noFeatureDirs points the logs and prompts directories away from the
// user's own, which the doctor reports.
func noFeatureDirs(t *testing.T) {
	t.Setenv("TAIRSEACH_LOGS", filepath.Join("testdata", "no-logs"))
	t.Setenv("TAIRSEACH_PROMPTS", filepath.Join("testdata", "no-prompts"))
}

// cli runs one command line in-process.
func cli(stdin string, args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

// transcript is the stable text form of one run, for golden files.
func transcript(args []string, stdout, stderr string, code int, replace map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "$ tairseach-mcp %s\n-- exit %d --\n-- stdout --\n%s-- stderr --\n%s", strings.Join(args, " "), code, stdout, stderr)
	s := b.String()
	for from, to := range replace {
		if from != "" {
			s = strings.ReplaceAll(s, from, to)
		}
	}
	return regexp.MustCompile(fmt.Sprintf(`\buid %d\b`, os.Getuid())).ReplaceAllString(s, "uid $$UID")
}

// checkGolden compares got with testdata/name.golden, or rewrites it with -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run '%s' -update creates it)", err, t.Name())
	}
	if got == string(want) {
		return
	}
	wl, gl := strings.Split(string(want), "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(wl), len(gl)); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			t.Errorf("output differs from %s at line %d (go test -update rewrites it):\nwant: %s\ngot:  %s\n\nwhole output:\n%s", path, i+1, w, g, got)
			return
		}
	}
}

type goldenCase struct {
	name     string
	args     []string
	stdin    string
	wantCode int
}

func runGolden(t *testing.T, tests []goldenCase, replace map[string]string) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := cli(tt.stdin, tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.wantCode, stdout, stderr)
			}
			checkGolden(t, tt.name, transcript(tt.args, stdout, stderr, code, replace))
		})
	}
}

func TestGoldenOffline(t *testing.T) {
	requireCorpus(t)
	cleanEnv(t)
	noFeatureDirs(t)
	ex := []string{"--manifests", exampleDir, "--socket", fixedSocket}
	co := []string{"--manifests", corpusDir, "--socket", fixedSocket}
	bad := filepath.Join("testdata", "validate")
	missing := filepath.Join("testdata", "no-such-dir")
	with := func(base []string, args ...string) []string { return append(append([]string{}, base...), args...) }
	runGolden(t, []goldenCase{
		{name: "tools_example", args: with(ex, "tools")},
		{name: "tools_example_all", args: with(ex, "tools", "--all")},
		{name: "tools_example_json", args: with(ex, "tools", "--json", "--all")},
		{name: "tools_corpus", args: with(co, "tools")},
		{name: "tools_corpus_all", args: with(co, "tools", "--all")},
		{name: "tools_bad", args: []string{"--manifests", bad, "--socket", fixedSocket, "tools", "--all"}},
		{name: "tools_missing_dir", args: []string{"--manifests", missing, "tools"}, wantCode: 1},

		{name: "validate_example", args: with(ex, "validate", "-v")},
		{name: "validate_corpus", args: with(co, "validate")},
		{name: "validate_corpus_verbose", args: with(co, "validate", "--verbose")},
		{name: "validate_corpus_json", args: with(co, "validate", "--json")},
		{name: "validate_corpus_dir_arg", args: []string{"validate", corpusDir}},
		{name: "validate_bad_dir", args: []string{"validate", "-v", bad}, wantCode: 1},
		{name: "validate_bad_dir_json", args: []string{"validate", "--json", bad}, wantCode: 1},
		{name: "validate_files", args: []string{"validate", filepath.Join(bad, "schemas.json"), filepath.Join(bad, "pair_a.json"), filepath.Join(bad, "pair_b.json")}, wantCode: 1},
		{name: "validate_hostile_schemas", args: []string{"validate", filepath.Join("testdata", "hostile")}, wantCode: 1},
		{name: "validate_implementation_types", args: []string{"validate", "-v", filepath.Join("testdata", "impl")}, wantCode: 1},
		{name: "validate_good_file", args: []string{"validate", filepath.Join(exampleDir, "server.json")}},
		{name: "validate_no_such_file", args: []string{"validate", filepath.Join(bad, "nope.json"), filepath.Join(exampleDir, "demo.json")}, wantCode: 1},
		{name: "validate_missing_dir", args: []string{"--manifests", missing, "validate"}, wantCode: 1},

		{name: "call_unknown_tool", args: with(ex, "call", "contacts.serch"), wantCode: 2},
		{name: "call_unknown_tool_far", args: with(ex, "call", "zzz"), wantCode: 2},
		{name: "call_bad_type", args: with(ex, "call", "contacts.search", "query=anna", "limit=2.5"), wantCode: 2},
		{name: "call_missing_required", args: with(ex, "call", "tairseach_contacts_get"), wantCode: 2},
		{name: "call_extra_argument", args: with(ex, "call", "contacts_list", "color=red"), wantCode: 2},
		{name: "call_below_minimum", args: with(ex, "call", "contacts.list", "limit=0"), wantCode: 2},
		{name: "call_null_argument", args: with(ex, "call", "contacts.list", `{"limit": null}`), wantCode: 2},
		{name: "call_not_key_value", args: with(ex, "call", "demo.echo", "hello"), wantCode: 2},
		{name: "call_bad_json", args: with(ex, "call", "demo.echo", `{"a":`), wantCode: 2},
		{name: "call_not_an_integer", args: with(ex, "call", "contacts.search", "query=anna", "limit=abc"), wantCode: 2},
		{name: "call_not_a_boolean", args: []string{"--manifests", typedDir, "--socket", fixedSocket, "call", "typed.echo", "flag=yes"}, wantCode: 2},
		{name: "call_not_an_array", args: []string{"--manifests", typedDir, "--socket", fixedSocket, "call", "typed.echo", "tags=a,b"}, wantCode: 2},
		{name: "call_not_a_whole_number", args: []string{"--manifests", typedDir, "--socket", fixedSocket, "call", "typed.echo", "n=1.5"}, wantCode: 2},
	}, nil)
}

// TestGoldenLive runs call and doctor against a live demo backend.
func TestGoldenLive(t *testing.T) {
	requireCorpus(t)
	cleanEnv(t)
	noFeatureDirs(t)
	e := newEnv(t)
	startBackend(t, e.socket)
	ex := []string{"--manifests", exampleDir, "--socket", e.socket}
	with := func(args ...string) []string { return append(append([]string{}, ex...), args...) }
	runGolden(t, []goldenCase{
		{name: "call_echo_key_value", args: with("call", "demo.echo", "text=hello", "n=42", "ok=true", "none=null", "list=[1,2]", "obj={\"a\":1}", "zip=007", `quoted="42"`, "empty=")},
		{name: "call_echo_json", args: with("call", "tairseach_demo_echo", `{"nested": {"a": [1, true, null]}, "s": "x"}`)},
		{name: "call_echo_stdin", args: with("call", "demo_echo", "-"), stdin: `{"from": "stdin"}`},
		{name: "call_get_pretty", args: with("call", "--pretty", "contacts.get", "id=c-001")},
		{name: "call_list_compact", args: with("call", "--compact", "contacts.list", "limit=2", "offset=1")},
		{name: "call_raw", args: with("call", "--raw", "contacts.get", "id=c-002")},
		{name: "call_backend_error", args: with("call", "demo.fail"), wantCode: 1},
		{name: "call_backend_error_raw", args: with("call", "--raw", "demo.fail"), wantCode: 1},
		{name: "call_typed_by_schema", args: []string{"--manifests", typedDir, "--socket", e.socket, "call", "typed.echo", "id=123", "n=42", "x=1.5", "flag=true", `tags=["a","b"]`, `o={"k":1}`, "note=null", "mixed=7", "other=007"}},
		{name: "call_typed_strings", args: []string{"--manifests", typedDir, "--socket", e.socket, "call", "typed.echo", `id="42"`, "note=hello", "mixed=abc", "id2=true"}},
		{name: "call_pretty_and_compact", args: with("call", "--pretty", "--compact", "demo.echo"), wantCode: 2},
		{name: "doctor_live", args: with("doctor")},
		{name: "doctor_corpus", args: []string{"--manifests", corpusDir, "--socket", e.socket, "doctor"}},
		{name: "doctor_missing_manifests", args: []string{"--manifests", filepath.Join("testdata", "no-such-dir"), "--socket", e.socket, "doctor"}, wantCode: 1},
		{name: "doctor_bad_manifests", args: []string{"--manifests", filepath.Join("testdata", "validate"), "--socket", e.socket, "doctor"}, wantCode: 1},
	}, map[string]string{e.socket: "$SOCKET"})
}

// TestGoldenPermissionDenied runs doctor, tools and call against a demo
// backend that has not been granted screen recording: what needs it is
// left out, and each says how to grant it.
func TestGoldenPermissionDenied(t *testing.T) {
	cleanEnv(t)
	noFeatureDirs(t)
	e := newEnv(t)
	startBackend(t, e.socket, "--grants", "screen_recording=denied")
	with := func(args ...string) []string {
		return append([]string{"--manifests", exampleDir, "--socket", e.socket}, args...)
	}
	runGolden(t, []goldenCase{
		{name: "doctor_denied", args: with("doctor")},
		{name: "tools_budget_denied", args: with("tools", "--budget")},
		{name: "tools_budget_denied_offered", args: with("--hide-ungranted=false", "tools", "--budget")},
		{name: "call_denied", args: with("call", "screen.capture"), wantCode: 1},
	}, map[string]string{e.socket: "$SOCKET"})
}

func TestGoldenDoctorSocketProblems(t *testing.T) {
	cleanEnv(t)
	noFeatureDirs(t)

	t.Run("doctor_missing_socket", func(t *testing.T) {
		e := newEnv(t)
		args := []string{"--manifests", exampleDir, "--socket", e.socket, "doctor"}
		stdout, stderr, code := cli("", args...)
		if code != 1 {
			t.Errorf("exit code %d, want 1\n%s%s", code, stdout, stderr)
		}
		checkGolden(t, "doctor_missing_socket", transcript(args, stdout, stderr, code, map[string]string{e.socket: "$SOCKET"}))
	})

	t.Run("doctor_not_a_socket", func(t *testing.T) {
		e := newEnv(t)
		if err := os.WriteFile(e.socket, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		args := []string{"--manifests", exampleDir, "--socket", e.socket, "doctor"}
		stdout, stderr, code := cli("", args...)
		if code != 1 {
			t.Errorf("exit code %d, want 1\n%s%s", code, stdout, stderr)
		}
		checkGolden(t, "doctor_not_a_socket", transcript(args, stdout, stderr, code, map[string]string{e.socket: "$SOCKET"}))
	})

	t.Run("doctor_socket_writable_by_others", func(t *testing.T) {
		e := newEnv(t)
		startBackend(t, e.socket)
		if err := os.Chmod(e.socket, 0o666); err != nil {
			t.Fatal(err)
		}
		args := []string{"--manifests", exampleDir, "--socket", e.socket, "doctor"}
		stdout, stderr, code := cli("", args...)
		if code != 1 || !strings.Contains(stdout, "FAIL") || !strings.Contains(stdout, "0666") {
			t.Errorf("exit code %d, want 1 and a FAIL naming mode 0666\n%s%s", code, stdout, stderr)
		}
		checkGolden(t, "doctor_socket_writable_by_others", transcript(args, stdout, stderr, code, map[string]string{e.socket: "$SOCKET"}))
	})

	t.Run("doctor_socket_wrong_owner", func(t *testing.T) {
		if os.Getuid() != 0 {
			t.Skip("changing a socket's owner needs root (CI runs the tests as root)")
		}
		e := newEnv(t)
		startBackend(t, e.socket)
		if err := os.Chown(e.socket, 12345, -1); err != nil {
			t.Fatal(err)
		}
		args := []string{"--manifests", exampleDir, "--socket", e.socket, "doctor"}
		stdout, stderr, code := cli("", args...)
		if code != 1 || !strings.Contains(stdout, "uid 12345") {
			t.Errorf("exit code %d, want 1 and a FAIL naming uid 12345\n%s%s", code, stdout, stderr)
		}
		checkGolden(t, "doctor_socket_wrong_owner", transcript(args, stdout, stderr, code, map[string]string{e.socket: "$SOCKET"}))
	})
}

// TestCallBackendDown checks the message when nothing listens; its text
// comes from socketrpc, so it is checked by content, not golden.
func TestCallBackendDown(t *testing.T) {
	cleanEnv(t)
	e := newEnv(t)
	stdout, stderr, code := cli("", "--manifests", exampleDir, "--socket", e.socket, "call", "server.status")
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if stdout != "" {
		t.Errorf("stdout %q: want nothing; the error goes to stderr", stdout)
	}
	if lines := strings.Split(strings.TrimSpace(stderr), "\n"); len(lines) != 1 || !strings.Contains(stderr, "tairseach_server_status failed") ||
		!strings.Contains(stderr, e.socket) || !strings.Contains(stderr, "not reachable") || !strings.Contains(stderr, "doctor") {
		t.Errorf("stderr %q: want one line naming the tool and the socket, and suggesting doctor", stderr)
	}
}

func TestExitCodes(t *testing.T) {
	cleanEnv(t)
	ex := []string{"--manifests", exampleDir, "--socket", fixedSocket}
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"tools", []string{"tools"}, 0},
		{"tools with an argument", []string{"tools", "extra"}, 2},
		{"tools with an unknown flag", []string{"tools", "--nope"}, 2},
		{"validate clean", []string{"validate"}, 0},
		{"validate errors", []string{"validate", filepath.Join("testdata", "validate")}, 1},
		{"call without a name", []string{"call"}, 2},
		{"call unknown tool", []string{"call", "nope"}, 2},
		{"call bad arguments", []string{"call", "contacts.get", "id=1", "id=2"}, 2},
		{"call backend down", []string{"call", "demo.echo"}, 1},
		{"doctor with no socket", []string{"doctor"}, 1},
		{"doctor with an argument", []string{"doctor", "now"}, 2},
		{"completion", []string{"completion", "bash"}, 0},
		{"completion with an argument", []string{"completion", "bash", "extra"}, 2},
		{"mistyped command", []string{"instal"}, 2},
		{"mistyped subcommand", []string{"config", "claud"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := cli("", append(append([]string{}, ex...), tt.args...)...)
			if code != tt.want {
				t.Errorf("exit code %d, want %d\nstdout:\n%.2000s\nstderr:\n%s", code, tt.want, stdout, stderr)
			}
			if code == 2 && !strings.HasPrefix(stderr, "tairseach-mcp: ") {
				t.Errorf("usage error without a diagnostic on stderr: %q", stderr)
			}
			if strings.Contains(stderr, errReported.Error()) {
				t.Errorf("a failure said twice, the second time without saying why: %q", stderr)
			}
		})
	}
}

func TestSuggestions(t *testing.T) {
	cleanEnv(t)
	for args, want := range map[string]string{
		"instal":       `unknown command "instal"; did you mean install? (tairseach-mcp --help lists the commands)`,
		"uninstal":     `did you mean uninstall?`,
		"doctr":        `did you mean doctor?`,
		"tool":         `did you mean tools?`,
		"xyzzy":        `unknown command "xyzzy"; tairseach-mcp --help lists the commands`,
		"config claud": `unknown command "claud"; did you mean claude? (tairseach-mcp config --help lists the commands)`,
		"--sokcet x":   `unknown flag: --sokcet (did you mean --socket?)`,
		"tools --jsno": `unknown flag: --jsno (did you mean --json?)`,
		"call --rwa x": `unknown flag: --rwa (did you mean --raw?)`,
		"tools --zzzz": `unknown flag: --zzzz (tairseach-mcp tools --help lists the flags)`,
		"call":         `usage: tairseach-mcp call NAME [JSON | key=value...]; name the tool to call (tairseach-mcp tools lists them)`,
	} {
		_, stderr, code := cli("", strings.Fields(args)...)
		if code != 2 || !strings.Contains(stderr, want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", args, code, stderr, want)
		}
	}
}

func TestCompletion(t *testing.T) {
	cleanEnv(t)
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		stdout, stderr, code := cli("", "completion", shell)
		if code != 0 || !strings.Contains(stdout, "tairseach-mcp") {
			t.Errorf("completion %s: exit %d, %d bytes, stderr %q", shell, code, len(stdout), stderr)
		}
	}
	// Tool names complete after call.
	stdout, _, code := cli("", "__complete", "--manifests", exampleDir, "call", "")
	if code != 0 || !strings.Contains(stdout, "tairseach_contacts_list\n") || !strings.Contains(stdout, "tairseach_server_status\n") {
		t.Errorf("__complete call: exit %d, output:\n%s", code, stdout)
	}
	// Short and dotted names complete in the form being typed.
	for word, want := range map[string][]string{
		"tairseach_contacts_l": {"tairseach_contacts_list"},
		"contacts_l":           {"contacts_list"},
		"contacts.l":           {"contacts.list"},
		"contacts.":            {"contacts.list", "contacts.search", "contacts.get"},
		"server":               {"server_status", "server.status"},
		"nope":                 nil,
	} {
		stdout, _, code := cli("", "__complete", "--manifests", exampleDir, "call", word)
		got := strings.Fields(stdout[:strings.LastIndex(stdout, ":")])
		slices.Sort(got)
		slices.Sort(want)
		if code != 0 || !slices.Equal(got, want) {
			t.Errorf("__complete call %s: %q, want %q", word, got, want)
		}
	}
	for _, cmd := range []string{"install", "uninstall"} {
		stdout, _, _ := cli("", "__complete", cmd, "")
		if got := strings.Fields(stdout[:strings.LastIndex(stdout, ":")]); !slices.Equal(got, clientNames()) {
			t.Errorf("__complete %s: %q, want the clients", cmd, got)
		}
		if stdout, _, _ := cli("", "__complete", cmd, "cursor", ""); strings.Contains(stdout, "vscode") {
			t.Errorf("__complete %s cursor: %q, want nothing after the client", cmd, stdout)
		}
	}
	help, _, _ := cli("", "--help")
	for _, c := range []string{"tools", "validate", "call", "doctor", "config", "install", "uninstall", "completion"} {
		if !regexp.MustCompile(`(?m)^  ` + c + `\s`).MatchString(help) {
			t.Errorf("--help does not list %s:\n%s", c, help)
		}
	}
}

// TestCommandsBinary runs a few commands through the real binary: the
// exit codes and the split between stdout and stderr as a shell sees them.
func TestCommandsBinary(t *testing.T) {
	requireCorpus(t)
	e := newEnv(t)
	startBackend(t, e.socket)
	bin := func(args ...string) (stdout, stderr string, code int) {
		t.Helper()
		cmd := exec.Command(bridgeBin, args...)
		cmd.Env = append(os.Environ(), "TAIRSEACH_MANIFESTS=", "TAIRSEACH_SOCKET=", "TAIRSEACH_MCP_LOG_LEVEL=")
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return out.String(), errb.String(), cmd.ProcessState.ExitCode()
	}

	t.Run("validate corpus", func(t *testing.T) {
		stdout, stderr, code := bin("validate", corpusDir)
		if code != 0 {
			t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
		}
		if got := strings.TrimSpace(stderr); got != "23 files, 91 tools, 0 errors, 19 warnings, 85 infos (-v shows them)" {
			t.Errorf("summary on stderr = %q", got)
		}
		if n := strings.Count(stdout, "is not exposed: duplicate of"); n != 15 {
			t.Errorf("%d duplicate warnings, want 15:\n%s", n, stdout)
		}
		if n := strings.Count(stdout, "no entry in implementation.methods"); n != 1 {
			t.Errorf("%d unmapped-tool warnings, want 1:\n%s", n, stdout)
		}
		if strings.Contains(stdout, ": error: ") {
			t.Errorf("errors in the corpus:\n%s", stdout)
		}
	})

	t.Run("validate bad manifests", func(t *testing.T) {
		stdout, stderr, code := bin("validate", "--json", filepath.Join("testdata", "validate"))
		var rep validation
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != 1 || rep.Errors == 0 {
			t.Fatalf("exit %d, errors %d (%v)\n%s%s", code, rep.Errors, err, stdout, stderr)
		}
	})

	t.Run("tools json", func(t *testing.T) {
		stdout, stderr, code := bin("--manifests", corpusDir, "tools", "--json")
		var tools []toolJSON
		if err := json.Unmarshal([]byte(stdout), &tools); err != nil || code != 0 || len(tools) != 91 || stderr != "" {
			t.Fatalf("exit %d, %d tools (%v), stderr %q", code, len(tools), err, stderr)
		}
	})

	t.Run("call", func(t *testing.T) {
		stdout, stderr, code := bin("--manifests", exampleDir, "--socket", e.socket, "call", "contacts.get", "id=c-001")
		var c map[string]any
		if err := json.Unmarshal([]byte(stdout), &c); err != nil || code != 0 || c["id"] != "c-001" || stderr != "" {
			t.Fatalf("exit %d, stdout %q (%v), stderr %q", code, stdout, err, stderr)
		}
		if strings.Count(stdout, "\n") != 1 {
			t.Errorf("stdout is not a terminal, so the JSON should be compact on one line: %q", stdout)
		}
		stdout, stderr, code = bin("--manifests", exampleDir, "--socket", e.socket, "call", "demo.fail")
		// A failed tool is said once, on stderr; stdout stays empty.
		if code != 1 || stdout != "" || strings.Count(stderr, "-32001") != 1 {
			t.Fatalf("demo.fail: exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
	})

	t.Run("doctor", func(t *testing.T) {
		stdout, stderr, code := bin("--manifests", exampleDir, "--socket", e.socket, "doctor")
		if code != 0 || strings.Contains(stdout, "FAIL") || strings.Contains(stdout, "\x1b[") {
			t.Fatalf("exit %d (colour only on a terminal)\n%s%s", code, stdout, stderr)
		}
		_, _, code = bin("--manifests", exampleDir, "--socket", filepath.Join(shortDir(t), "none.sock"), "doctor")
		if code != 1 {
			t.Fatalf("doctor without a socket: exit %d, want 1", code)
		}
	})
}

func TestDoctorColour(t *testing.T) {
	for _, colour := range []bool{false, true} {
		var out bytes.Buffer
		d := &doctor{out: &out, colour: colour}
		d.report(statusOK, "fine", "")
		d.report(statusWarn, "meh", "do this")
		d.report(statusFail, "broken", "do that")
		got := out.String()
		want := "OK    fine\nWARN  meh; fix: do this\nFAIL  broken; fix: do that\n"
		if colour {
			want = "\x1b[32mOK  \x1b[0m  fine\n\x1b[33mWARN\x1b[0m  meh; fix: do this\n\x1b[31mFAIL\x1b[0m  broken; fix: do that\n"
		}
		if got != want || !d.failed {
			t.Errorf("colour %v: got %q, failed %v; want %q", colour, got, d.failed, want)
		}
	}
}

// TestCommandsAudit: --audit-log holds for the commands as for serve: a
// call from `call`, and doctor's round trip, each have their line, with
// transport "cli", when the command has exited.
func TestCommandsAudit(t *testing.T) {
	e := newEnv(t)
	startBackend(t, e.socket)
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	for _, args := range [][]string{
		{"call", "demo.echo", "text=hi"},
		{"call", "demo.fail"},
		{"doctor"},
	} {
		cmd := exec.Command(bridgeBin, append([]string{"--manifests", exampleDir, "--socket", e.socket, "--audit-log", audit}, args...)...)
		cmd.Env = append(os.Environ(), "TAIRSEACH_MANIFESTS=", "TAIRSEACH_SOCKET=", "TAIRSEACH_MCP_LOG_LEVEL=")
		if out, err := cmd.CombinedOutput(); err != nil && args[1] != "demo.fail" {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	var got []string
	for _, r := range readAudit(t, audit) {
		if r.Transport != "cli" {
			t.Errorf("line of %s says transport %q, want cli", r.Tool, r.Transport)
		}
		got = append(got, r.Tool+" "+r.Outcome)
	}
	if want := []string{"tairseach_demo_echo ok", "tairseach_demo_fail tool_error", "tairseach_server_status ok"}; !slices.Equal(got, want) {
		t.Errorf("audit lines %q, want %q", got, want)
	}
}
