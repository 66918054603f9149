package main

// Tests of the JSON client files: parsing, layouts, and a fuzz test of
// install and uninstall on any file.

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/tailscale/hujson"
)

func TestParseJSONFile(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`{"a":1,"a":2}`, ""},
		{``, ""},
		{"  \n", ""},
		{"{\n  // comment\n  \"a\": [1, 2,],\n}", ""},
		{`{"a":1} {}`, "1:9: invalid character '{' after top-level value"},
		{`{"a":1`, "1:7: the file ends inside a value"},
		{`"x"`, "the top level is a string"},
		{`null`, "the top level is null"},
		{"{\n  \"a\": 1\n  \"b\": 2\n}", "3:3: invalid character '\"' after object value"},
		{"{\n  /* open", "2:3: the file ends inside a value"},
	} {
		_, err := parseJSONFile([]byte(tt.in), "mcpServers")
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("parseJSONFile(%q) = %v, want %q", tt.in, err, tt.want)
		}
	}
}

// TestJSONLayouts adds the entry to server maps laid out every way, and
// takes it out again.
func TestJSONLayouts(t *testing.T) {
	entry := []byte(`{"command":"/bin/ts","args":["--a"]}`)
	for _, tt := range []struct {
		in, installed string
		back          string // after uninstall, when not in
	}{
		{in: `{"mcpServers": {}}`, installed: `{"mcpServers": {"tairseach": {"command": "/bin/ts", "args": ["--a"]}}}`},
		{in: `{"mcpServers": {"a": 1}}`, installed: `{"mcpServers": {"a": 1, "tairseach": {"command": "/bin/ts", "args": ["--a"]}}}`},
		{in: `{"mcpServers":{"a":1}}`, installed: `{"mcpServers":{"a":1,"tairseach": {"command": "/bin/ts", "args": ["--a"]}}}`},
		{in: "{\n  \"mcpServers\": {}\n}\n", installed: "{\n  \"mcpServers\": {\n    \"tairseach\": {\n      \"command\": \"/bin/ts\",\n      \"args\": [\n        \"--a\"\n      ]\n    }\n  }\n}\n"},
		{
			in:        "{\n  \"mcpServers\": {\n  }\n}\n",
			installed: "{\n  \"mcpServers\": {\n    \"tairseach\": {\n      \"command\": \"/bin/ts\",\n      \"args\": [\n        \"--a\"\n      ]\n    }\n  }\n}\n",
			back:      "{\n  \"mcpServers\": {}\n}\n",
		},
		{
			in:        "{\n  \"other\": true\n}",
			installed: "{\n  \"other\": true,\n  \"mcpServers\": {\n    \"tairseach\": {\n      \"command\": \"/bin/ts\",\n      \"args\": [\n        \"--a\"\n      ]\n    }\n  }\n}",
			back:      "{\n  \"other\": true,\n  \"mcpServers\": {}\n}", // the map install made stays, empty
		},
		{
			in:        "{\n\t\"mcpServers\": {\n\t\t\"a\": 1, // one\n\n\t\t// the end\n\t},\n}\n",
			installed: "{\n\t\"mcpServers\": {\n\t\t\"a\": 1, // one\n\n\t\t// the end\n\t\t\"tairseach\": {\n\t\t\t\"command\": \"/bin/ts\",\n\t\t\t\"args\": [\n\t\t\t\t\"--a\"\n\t\t\t]\n\t\t},\n\t},\n}\n",
		},
		{
			in:        "{\n  \"mcpServers\": {\n    \"a\": 1,\n  },\n}",
			installed: "{\n  \"mcpServers\": {\n    \"a\": 1,\n    \"tairseach\": {\n      \"command\": \"/bin/ts\",\n      \"args\": [\n        \"--a\"\n      ]\n    },\n  },\n}",
		},
		{
			in:        "{\n  \"mcpServers\": {\n    \"a\": 1}}",
			installed: "{\n  \"mcpServers\": {\n    \"a\": 1,\n    \"tairseach\": {\n      \"command\": \"/bin/ts\",\n      \"args\": [\n        \"--a\"\n      ]\n    }}}",
		},
		{
			in:        "{\r\n  \"mcpServers\": {\r\n    \"a\": 1\r\n  }\r\n}\r\n",
			installed: "{\r\n  \"mcpServers\": {\r\n    \"a\": 1,\r\n    \"tairseach\": {\r\n      \"command\": \"/bin/ts\",\r\n      \"args\": [\r\n        \"--a\"\r\n      ]\r\n    }\r\n  }\r\n}\r\n",
		},
		{
			in:        "{\n  \"mcpServers\": { // none yet\n  }\n}\n",
			installed: "{\n  \"mcpServers\": { // none yet\n    \"tairseach\": {\n      \"command\": \"/bin/ts\",\n      \"args\": [\n        \"--a\"\n      ]\n    }\n  }\n}\n",
		},
		{
			in:        "{\"mcpServers\": null}",
			installed: "{\"mcpServers\": {\"tairseach\": {\"command\": \"/bin/ts\", \"args\": [\"--a\"]}}}",
			back:      "{\"mcpServers\": {}}",
		},
	} {
		f, err := parseJSONFile([]byte(tt.in), "mcpServers")
		if err != nil {
			t.Errorf("%q: %v", tt.in, err)
			continue
		}
		if err := f.set(entry); err != nil {
			t.Errorf("%q: set: %v", tt.in, err)
			continue
		}
		if got := string(f.bytes()); got != tt.installed {
			t.Errorf("install into %q:\n got %q\nwant %q", tt.in, got, tt.installed)
			continue
		}
		f, err = parseJSONFile([]byte(tt.installed), "mcpServers")
		if err != nil {
			t.Fatal(err)
		}
		if found, same, err := f.entry(entry); !found || !same || err != nil {
			t.Errorf("%q: entry() = %v, %v, %v after install", tt.in, found, same, err)
		}
		if err := f.remove(); err != nil {
			t.Fatal(err)
		}
		want := tt.in
		if tt.back != "" {
			want = tt.back
		}
		if got := string(f.bytes()); got != want {
			t.Errorf("uninstall from %q:\n got %q\nwant %q", tt.installed, got, want)
		}
	}
}

// FuzzJSONFile: whatever the file, install and uninstall never panic,
// write a file that parses with the entry as meant, and leave the rest's
// values as they were; a non-empty server map without the entry comes back
// byte for byte.
func FuzzJSONFile(f *testing.F) {
	for _, s := range fixtures {
		f.Add(s)
	}
	for _, rt := range roundTrips {
		f.Add(rt.file)
	}
	f.Add("{\n  \"mcpServers\": {\"a\": 1,}, // x\n}")
	f.Add("{\"mcpServers\": {\"tairseach\": 1, \"tairseach\": 2}}")
	entry := []byte(`{"command":"/bin/ts","args":["--a"]}`)
	f.Fuzz(func(t *testing.T, in string) {
		for _, key := range []string{"mcpServers", "servers"} {
			jf, err := parseJSONFile([]byte(in), key)
			if err != nil {
				return
			}
			_, obj, err := jf.servers()
			if err != nil {
				return
			}
			exact := obj != nil && len(obj.Members) > 0 && lastMember(obj, entryName) < 0
			if err := jf.set(entry); err != nil {
				t.Fatalf("set: %v", err)
			}
			installed := jf.bytes()
			jf, err = parseJSONFile(installed, key)
			if err != nil {
				t.Fatalf("the installed file does not parse: %v\n%s", err, installed)
			}
			if found, same, err := jf.entry(entry); !found || !same || err != nil {
				t.Fatalf("entry() = %v, %v, %v:\n%s", found, same, err, installed)
			}
			if err := jf.remove(); err != nil {
				t.Fatal(err)
			}
			back := jf.bytes()
			if exact && string(back) != in {
				t.Fatalf("not restored byte for byte:\n%q\ninstalled\n%q\nback\n%q", in, installed, back)
			}
			if _, err := parseJSONFile(back, key); err != nil {
				t.Fatalf("the uninstalled file does not parse: %v\n%s", err, back)
			}
			if strings.TrimSpace(in) != "" && !sameJSON(valuesWithout(t, []byte(in), key), valuesWithout(t, back, key)) {
				t.Fatalf("values changed:\n%s\nback\n%s", in, back)
			}
		}
	})
}

// valuesWithout is a JSONC file as standard JSON, without the entry and
// without a server map left empty.
func valuesWithout(t *testing.T, data []byte, key string) []byte {
	std, err := hujson.Standardize(slices.Clone(data))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(std, &doc); err != nil {
		t.Fatalf("%v\n%s", err, std)
	}
	if servers, ok := doc[key].(map[string]any); ok {
		delete(servers, entryName)
		if len(servers) == 0 {
			delete(doc, key)
		}
	} else if doc[key] == nil {
		delete(doc, key)
	}
	b, _ := json.Marshal(doc)
	return b
}
