package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildArgsBySchema: key=value pairs read as the types of the tool's
// inputSchema.
func TestBuildArgsBySchema(t *testing.T) {
	schema := []byte(`{"type":"object","properties":{"id":{"type":"string"},"n":{"type":"integer"},
		"x":{"type":"number"},"b":{"type":"boolean"},"a":{"type":"array"},"o":{"type":"object"},
		"sn":{"type":["string","null"]},"is":{"type":["integer","string"]},"z":{"type":"null"},"any":{}}}`)
	tests := []struct {
		arg, want, wantErr string
	}{
		{arg: "id=123", want: `"123"`},
		{arg: "id=c-001", want: `"c-001"`},
		{arg: `id="42"`, want: `"42"`},
		{arg: "id=true", want: `"true"`},
		{arg: "id=null", want: `"null"`},
		{arg: "id=[1]", want: `"[1]"`},
		{arg: "id=", want: `""`},
		{arg: "n=123", want: `123`},
		{arg: "n=-7", want: `-7`},
		{arg: "n=1e3", want: `1e3`},
		{arg: "n=abc", wantErr: "n=abc: n is an integer; give a whole number, such as n=10"},
		{arg: "n=2.5", wantErr: "n=2.5: n is an integer; give a whole number"},
		{arg: `n="5"`, wantErr: "n is an integer"},
		{arg: "n=null", wantErr: "n is an integer"},
		{arg: "x=2.5", want: `2.5`},
		{arg: "x=abc", wantErr: "x=abc: x is a number; give a number, such as x=1.5"},
		{arg: "b=true", want: `true`},
		{arg: "b=false", want: `false`},
		{arg: "b=yes", wantErr: "b=yes: b is a boolean; give b=true or b=false"},
		{arg: "a=[1, 2]", want: `[1,2]`},
		{arg: "a=x,y", wantErr: `a is an array; give it as JSON, quoted for the shell: a='["a","b"]'`},
		{arg: `o={"k": 1}`, want: `{"k":1}`},
		{arg: "o=k", wantErr: `o is an object; give it as JSON`},
		{arg: "sn=null", want: `null`},
		{arg: "sn=12", want: `"12"`},
		{arg: "is=12", want: `12`},
		{arg: "is=abc", want: `"abc"`},
		{arg: "z=null", want: `null`},
		{arg: "z=0", wantErr: "z is null; give z=null or leave it out"},
		{arg: "any=12", want: `12`},
		{arg: "any=abc", want: `"abc"`},
		{arg: "unlisted=true", want: `true`},
		{arg: "unlisted=007", want: `"007"`},
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			got, err := buildArgs([]string{tt.arg}, strings.NewReader(""), schema)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %s, %v; want an error containing %q", got, err, tt.wantErr)
				}
				return
			}
			k, _, _ := strings.Cut(tt.arg, "=")
			if want := `{"` + k + `":` + tt.want + `}`; err != nil || string(got) != want {
				t.Fatalf("got %s, %v; want %s", got, err, want)
			}
		})
	}
}

// TestCallErrorSaidOnce: a call whose tool fails says so once, on stderr,
// with the backend's remediation where it gives one, and exits 1; stdout
// stays empty. On a terminal both reach the user, and the error was said
// twice. --raw prints the whole result on stdout and does not repeat it.
func TestCallErrorSaidOnce(t *testing.T) {
	cleanEnv(t)
	noFeatureDirs(t)
	e := newEnv(t)
	startBackend(t, e.socket, "--grants", "screen_recording=denied")
	gone := filepath.Join(shortDir(t), "gone.sock")
	for _, tt := range []struct {
		name string
		args []string
		says string // the error, which must appear once
		also string // and on the same line of stderr
	}{
		{"backend error", []string{"--socket", e.socket, "call", "demo.fail"}, "permission denied: contacts", `; "Open System Settings → Privacy & Security → Contacts and allow Tairseach"`},
		{"not found", []string{"--socket", e.socket, "call", "contacts.get", "id=nope"}, "contact not found: nope", "error -32002"},
		{"permission left out", []string{"--socket", e.socket, "call", "screen.capture"}, `needs the macOS permission "screen_recording"`, "(tairseach-mcp doctor checks the setup)"},
		{"backend not running", []string{"--socket", gone, "call", "contacts.list"}, "is not reachable at " + gone, "(tairseach-mcp doctor checks the setup)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := cli("", append([]string{"--manifests", exampleDir}, tt.args...)...)
			if code != 1 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "tairseach-mcp: ") {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 1, nothing on stdout and one line on stderr", code, stdout, stderr)
			}
			if n := strings.Count(stdout+stderr, tt.says); n != 1 || !strings.Contains(stderr, tt.also) {
				t.Errorf("stderr %q says %q %d times, want once, with %q", stderr, tt.says, n, tt.also)
			}
		})
	}
	stdout, stderr, code := cli("", "--manifests", exampleDir, "--socket", e.socket, "call", "--raw", "demo.fail")
	if code != 1 || !strings.Contains(stdout, `"isError":true`) || strings.Count(stdout+stderr, "permission denied: contacts") != 1 {
		t.Errorf("--raw: exit %d, stdout %q, stderr %q; want 1, the result on stdout, the error once", code, stdout, stderr)
	}
}
