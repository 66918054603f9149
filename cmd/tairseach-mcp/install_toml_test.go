package main

// Tests of Codex's config.toml: layouts, files refused, and a fuzz test of
// install and uninstall on any file.

import (
	"strings"
	"testing"
)

// TestTOMLFile edits Codex files laid out every way, and refuses those
// whose entry it cannot edit by its table.
func TestTOMLFile(t *testing.T) {
	entry := serverEntry{command: `/opt/t "s"\bin`, args: []string{"--a=b\tc", "é"}}
	block := tomlEntry("mcp_servers", entry, "url")
	const want = "[mcp_servers.tairseach]\ncommand = \"/opt/t \\\"s\\\"\\\\bin\"\nargs = [\"--a=b\\tc\", \"é\"]\n"
	if string(block) != want {
		t.Fatalf("tomlEntry:\n%s\nwant\n%s", block, want)
	}
	doc, err := decodeTOML(block)
	if err != nil {
		t.Fatal(err)
	}
	if got := doc["mcp_servers"].(map[string]any)["tairseach"].(map[string]any)["command"]; got != entry.command {
		t.Errorf("command decodes as %q", got)
	}

	for _, tt := range []struct{ name, in, installed, removed string }{
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
			in:        "a = 1\n\n[mcp_servers.tairseach] # ours\ncommand = \"old\"\n\n[mcp_servers.tairseach.env]\nX = \"y\"\n\n# the next one\n[b]\nc = [\n  2,\n]\n",
			installed: "a = 1\n\n" + want + "\n# the next one\n[b]\nc = [\n  2,\n]\n",
			removed:   "a = 1\n\n# the next one\n[b]\nc = [\n  2,\n]\n",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := parseTOMLFile([]byte(tt.in), "mcp_servers")
			if err != nil {
				t.Fatal(err)
			}
			if err := f.set(block); err != nil {
				t.Fatal(err)
			}
			if got := string(f.bytes()); got != tt.installed {
				t.Fatalf("installed:\n%q\nwant\n%q", got, tt.installed)
			}
			if f, err = parseTOMLFile(f.bytes(), "mcp_servers"); err != nil {
				t.Fatal(err)
			}
			if found, same, err := f.entry(block); !found || !same || err != nil {
				t.Errorf("entry() = %v, %v, %v after install", found, same, err)
			}
			if err := f.remove(); err != nil {
				t.Fatal(err)
			}
			if got := string(f.bytes()); got != tt.removed {
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
			f, err := parseTOMLFile([]byte(tt.in), "mcp_servers")
			if err != nil {
				t.Fatal(err)
			}
			if err := f.set(block); err == nil || !strings.Contains(err.Error(), tt.setErr) {
				t.Errorf("set: %v, want %q", err, tt.setErr)
			}
			if tt.removeErr != "" {
				if err := f.remove(); err == nil || !strings.Contains(err.Error(), tt.removeErr) {
					t.Errorf("remove: %v, want %q", err, tt.removeErr)
				}
			}
			if string(f.bytes()) != tt.in {
				t.Errorf("the file changed:\n%s", f.bytes())
			}
		})
	}
}

// FuzzTOMLFile: whatever the file, install and uninstall never panic and
// write only what decodes as meant; a file without the entry comes back
// byte for byte.
func FuzzTOMLFile(f *testing.F) {
	f.Add(fixtures["mcp_servers"])
	f.Add(roundTrips[2].file)
	f.Add("a = 1\r\n[mcp_servers.tairseach]\r\ncommand = \"x\"\r\n[b]\r\n")
	f.Add("[mcp_servers]\ntairseach = { command = \"x\" }\n")
	block := tomlEntry("mcp_servers", serverEntry{command: "/bin/ts", args: []string{"--a"}}, "url")
	f.Fuzz(func(t *testing.T, in string) {
		tf, err := parseTOMLFile([]byte(in), "mcp_servers")
		if err != nil {
			return
		}
		_, had := tf.servers()[entryName]
		if err := tf.set(block); err != nil {
			if string(tf.bytes()) != in {
				t.Fatalf("a refused set changed the file")
			}
			return
		}
		installed := tf.bytes()
		if tf, err = parseTOMLFile(installed, "mcp_servers"); err != nil {
			t.Fatalf("the installed file does not parse: %v\n%s", err, installed)
		}
		if found, same, err := tf.entry(block); !found || !same || err != nil {
			t.Fatalf("entry() = %v, %v, %v:\n%s", found, same, err, installed)
		}
		if err := tf.remove(); err != nil {
			t.Fatalf("remove after set: %v\n%s", err, installed)
		}
		if back := tf.bytes(); !had && string(back) != in {
			t.Fatalf("not restored byte for byte:\n%q\ninstalled\n%q\nback\n%q", in, installed, back)
		}
	})
}
