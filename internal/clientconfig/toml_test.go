package clientconfig

// Tests of Codex's config.toml: layouts, files refused, and a fuzz test of
// setting the entry and taking it out on any file.

import (
	"reflect"
	"strings"
	"testing"
)

// TestTOMLFile edits Codex files laid out every way, and refuses those
// whose entry it cannot edit by its table.
func TestTOMLFile(t *testing.T) {
	path := `/opt/t "s"\bin`
	stdio := tomlOwned([]Field{{Key: "command", Value: path}, {Key: "args", Value: []string{"--a=b\tc", "é"}}})
	http := tomlOwned([]Field{{Key: "url", Value: "http://127.0.0.1:8765/mcp"}, {Key: "http_headers", Sub: []Field{{Key: "Authorization", Value: "Bearer t"}}}})
	block := tomlEntry("mcp_servers", "tairseach", stdio)
	const want = "[mcp_servers.tairseach]\ncommand = \"/opt/t \\\"s\\\"\\\\bin\"\nargs = [\"--a=b\\tc\", \"é\"]\n"
	const command, args = "command = \"/opt/t \\\"s\\\"\\\\bin\"\n", "args = [\"--a=b\\tc\", \"é\"]\n"
	const url, headers = "url = \"http://127.0.0.1:8765/mcp\"\n", "http_headers = { Authorization = \"Bearer t\" }\n"
	if string(block) != want || want != "[mcp_servers.tairseach]\n"+command+args {
		t.Fatalf("tomlEntry:\n%s\nwant\n%s", block, want)
	}
	doc, err := decodeTOML(block)
	if err != nil {
		t.Fatal(err)
	}
	if got := doc["mcp_servers"].(map[string]any)["tairseach"].(map[string]any)["command"]; got != path {
		t.Errorf("command decodes as %q", got)
	}

	for _, tt := range []struct {
		name, in, installed, removed string
		fields                       []Field
	}{
		{name: "empty", in: "", installed: want, removed: ""},
		{name: "round trip", in: "a = 1\n", installed: "a = 1\n\n" + want, removed: "a = 1\n"},
		{name: "no final line break", in: "a = 1", installed: "a = 1\n\n" + strings.TrimSuffix(want, "\n"), removed: "a = 1"},
		{
			name:      "CRLF",
			in:        "a = 1\r\n",
			installed: "a = 1\r\n\r\n" + strings.ReplaceAll(want, "\n", "\r\n"),
			removed:   "a = 1\r\n",
		},
		{
			name:      "old entry with a subtable, between others",
			in:        "a = 1\n\n[mcp_servers.tairseach] # ours\ncommand = \"old\" # was\n\n[mcp_servers.tairseach.env]\nX = \"y\"\n\n# the next one\n[b]\nc = [\n  2,\n]\n",
			installed: "a = 1\n\n[mcp_servers.tairseach] # ours\ncommand = \"/opt/t \\\"s\\\"\\\\bin\" # was\n" + args + "\n[mcp_servers.tairseach.env]\nX = \"y\"\n\n# the next one\n[b]\nc = [\n  2,\n]\n",
			removed:   "a = 1\n\n# the next one\n[b]\nc = [\n  2,\n]\n",
		},
		{
			name:      "HTTP to stdio: the other form's keys go, the rest stays",
			in:        "[mcp_servers.tairseach]\n# remote\nurl = \"http://old/mcp\"\nenabled = false\nhttp_headers = { Authorization = \"Bearer x\" }\ntool_timeout_sec = 30\n",
			installed: "[mcp_servers.tairseach]\n# remote\n" + command + args + "enabled = false\ntool_timeout_sec = 30\n",
		},
		{
			name:      "stdio to HTTP, headers of the user's kept",
			fields:    http,
			in:        "[mcp_servers.tairseach]\nenabled = false\ncommand = \"old\"\nargs = [\n  \"--x\",\n]\nstartup_timeout_sec = 20\n\n[mcp_servers.tairseach.http_headers]\nX-Team = \"t\"\n\n[mcp_servers.tairseach.env]\nA = \"b\"\n",
			installed: "[mcp_servers.tairseach]\nenabled = false\n" + url + "http_headers = { Authorization = \"Bearer t\", X-Team = \"t\" }\nstartup_timeout_sec = 20\n\n[mcp_servers.tairseach.env]\nA = \"b\"\n",
		},
		{
			name:      "a key added after the owned one before it",
			fields:    http,
			in:        "[mcp_servers.tairseach]\nurl = \"http://127.0.0.1:8765/mcp\"\nenabled = false",
			installed: "[mcp_servers.tairseach]\n" + url + headers + "enabled = false",
		},
		{
			name:      "keys added after the last, which has no line break",
			in:        "[mcp_servers.tairseach]\nenabled = false",
			installed: "[mcp_servers.tairseach]\nenabled = false\n" + command + strings.TrimSuffix(args, "\n"),
		},
		{
			name:      "only a subtable: the table goes before it",
			in:        "a = 1\n\n[mcp_servers.tairseach.env]\nX = \"y\"\n",
			installed: "a = 1\n\n" + want + "\n[mcp_servers.tairseach.env]\nX = \"y\"\n",
			removed:   "a = 1\n",
		},
		{
			name:      "dotted owned keys are written as one",
			fields:    http,
			in:        "[mcp_servers.tairseach]\nhttp_headers.X = \"y\"\nurl = \"http://127.0.0.1:8765/mcp\"\nhttp_headers.Authorization = \"Bearer old\"\n",
			installed: "[mcp_servers.tairseach]\n" + url + "http_headers = { Authorization = \"Bearer t\", X = \"y\" }\n",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fields := stdio
			if tt.fields != nil {
				fields = tt.fields
			}
			f, err := ParseTOML([]byte(tt.in), "mcp_servers", "tairseach")
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Set(fields); err != nil {
				t.Fatal(err)
			}
			if got := string(f.Bytes()); got != tt.installed {
				t.Fatalf("installed:\n%q\nwant\n%q", got, tt.installed)
			}
			if f, err = ParseTOML(f.Bytes(), "mcp_servers", "tairseach"); err != nil {
				t.Fatal(err)
			}
			if found, err := f.Has(); !found || err != nil {
				t.Errorf("has() = %v, %v after install", found, err)
			}
			if err := f.Set(fields); err != nil || string(f.Bytes()) != tt.installed {
				t.Errorf("set again: %v\n%q", err, f.Bytes())
			}
			if err := f.Remove(); err != nil {
				t.Fatal(err)
			}
			if got := string(f.Bytes()); got != tt.removed {
				t.Errorf("removed:\n%q\nwant\n%q", got, tt.removed)
			}
		})
	}

	for _, tt := range []struct{ name, in, setErr, removeErr string }{
		{name: "inline server map", in: "mcp_servers = { a = { command = \"x\" } }\n", setErr: "add it by hand"},
		{name: "inline entry", in: "[mcp_servers]\ntairseach = { command = \"x\" }\n", setErr: "add it by hand", removeErr: "remove it by hand"},
		{name: "dotted entry", in: "mcp_servers.tairseach.command = \"x\"\n", setErr: "add it by hand", removeErr: "remove it by hand"},
		{name: "array of tables", in: "[[mcp_servers.tairseach]]\ncommand = \"x\"\n", setErr: "add it by hand", removeErr: "remove it by hand"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ParseTOML([]byte(tt.in), "mcp_servers", "tairseach")
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Set(stdio); err == nil || !strings.Contains(err.Error(), tt.setErr) {
				t.Errorf("set: %v, want %q", err, tt.setErr)
			}
			if tt.removeErr != "" {
				if err := f.Remove(); err == nil || !strings.Contains(err.Error(), tt.removeErr) {
					t.Errorf("remove: %v, want %q", err, tt.removeErr)
				}
			}
			if string(f.Bytes()) != tt.in {
				t.Errorf("the file changed:\n%s", f.Bytes())
			}
		})
	}
}

// FuzzTOMLFile: whatever the file, install and uninstall never panic and
// write only what decodes as meant: the keys install owns set, the others
// as they were, from stdio to HTTP; run again, they change nothing; a file
// without the entry comes back byte for byte.
func FuzzTOMLFile(f *testing.F) {
	addSeeds(f, "*.toml")
	f.Add("a = 1\r\n[mcp_servers.tairseach]\r\ncommand = \"x\"\r\n[b]\r\n")
	f.Add("[mcp_servers]\ntairseach = { command = \"x\" }\n")
	f.Add("[mcp_servers.tairseach.env]\nX = 1\n[mcp_servers.tairseach]\nurl = \"u\"\n[mcp_servers.tairseach.http_headers]\nA = \"b\"")
	entries := [][]Field{
		tomlOwned([]Field{{Key: "command", Value: "/bin/ts"}, {Key: "args", Value: []string{"--a"}}}),
		tomlOwned([]Field{{Key: "url", Value: "http://127.0.0.1:8765/mcp"}, {Key: "http_headers", Sub: []Field{{Key: "Authorization", Value: "Bearer t"}}}}),
	}
	f.Fuzz(func(t *testing.T, in string) {
		tf, err := ParseTOML([]byte(in), "mcp_servers", "tairseach")
		if err != nil {
			return
		}
		_, had := tf.servers()["tairseach"]
		installed := []byte(in)
		for _, fields := range entries {
			old, _ := tf.servers()["tairseach"].(map[string]any)
			if err := tf.Set(fields); err != nil {
				if string(tf.Bytes()) != string(installed) {
					t.Fatalf("a refused set changed the file")
				}
				return
			}
			installed = tf.Bytes()
			if tf, err = ParseTOML(installed, "mcp_servers", "tairseach"); err != nil {
				t.Fatalf("the installed file does not parse: %v\n%s", err, installed)
			}
			if got, want := tf.servers()["tairseach"], Merge(old, fields); !reflect.DeepEqual(got, any(want)) {
				t.Fatalf("the entry reads %v, want %v:\n%s", got, want, installed)
			}
			if err := tf.Set(fields); err != nil || string(tf.Bytes()) != string(installed) {
				t.Fatalf("set again: %v\n%s\nwant\n%s", err, tf.Bytes(), installed)
			}
		}
		if err := tf.Remove(); err != nil {
			t.Fatalf("remove after set: %v\n%s", err, installed)
		}
		if back := tf.Bytes(); !had && string(back) != in {
			t.Fatalf("not restored byte for byte:\n%q\ninstalled\n%q\nback\n%q", in, installed, back)
		}
	})
}
