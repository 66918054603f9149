package clientconfig

// Tests of the JSON client files: parsing, layouts, merges, and a fuzz test
// of setting the entry and taking it out on any file.

import (
	"bytes"
	"encoding/json"
	"reflect"
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
		_, err := ParseJSON([]byte(tt.in), "mcpServers", "tairseach")
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("ParseJSON(%q) = %v, want %q", tt.in, err, tt.want)
		}
	}
}

// TestJSONLayouts adds the entry to server maps laid out every way, and
// takes it out again.
func TestJSONLayouts(t *testing.T) {
	fields := []Field{{Key: "command", Value: "/bin/ts"}, {Key: "args", Value: []string{"--a"}}}
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
		f, err := ParseJSON([]byte(tt.in), "mcpServers", "tairseach")
		if err != nil {
			t.Errorf("%q: %v", tt.in, err)
			continue
		}
		if err := f.Set(fields); err != nil {
			t.Errorf("%q: set: %v", tt.in, err)
			continue
		}
		if got := string(f.Bytes()); got != tt.installed {
			t.Errorf("install into %q:\n got %q\nwant %q", tt.in, got, tt.installed)
			continue
		}
		f, err = ParseJSON([]byte(tt.installed), "mcpServers", "tairseach")
		if err != nil {
			t.Fatal(err)
		}
		if found, err := f.Has(); !found || err != nil {
			t.Errorf("%q: has() = %v, %v after install", tt.in, found, err)
		}
		if err := f.Set(fields); err != nil || string(f.Bytes()) != tt.installed {
			t.Errorf("%q: set again: %v\n%q", tt.in, err, f.Bytes())
		}
		if err := f.Remove(); err != nil {
			t.Fatal(err)
		}
		want := tt.in
		if tt.back != "" {
			want = tt.back
		}
		if got := string(f.Bytes()); got != want {
			t.Errorf("uninstall from %q:\n got %q\nwant %q", tt.installed, got, want)
		}
	}
}

// TestJSONMerge sets the members install owns in entries laid out every
// way, with members of the user's: those stay, with their comments, and
// what install adds is laid out as the entry is.
func TestJSONMerge(t *testing.T) {
	stdio := owned(false, "", "")
	http := owned(false, "http://h/mcp", "t")
	noAuth := owned(false, "http://h/mcp", "")
	for _, tt := range []struct {
		name, in, want string
		fields         []Field
	}{
		{
			name:   "on one line: args after command",
			fields: stdio,
			in:     `{"mcpServers": {"tairseach": {"command": "/old", "disabled": true}}}`,
			want:   `{"mcpServers": {"tairseach": {"command": "/bin/ts", "args": ["--a"], "disabled": true}}}`,
		},
		{
			name:   "compact",
			fields: stdio,
			in:     `{"mcpServers":{"tairseach":{"env":{},"command":"/old"}}}`,
			want:   `{"mcpServers":{"tairseach":{"env":{},"command":"/bin/ts","args": ["--a"]}}}`,
		},
		{
			name:   "an empty [] takes the entry's layout",
			fields: stdio,
			in:     "{\n  \"mcpServers\": {\n    \"tairseach\": {\n      \"command\": \"/old\",\n      \"args\": [],\n      \"env\": {}\n    }\n  }\n}\n",
			want:   "{\n  \"mcpServers\": {\n    \"tairseach\": {\n      \"command\": \"/bin/ts\",\n      \"args\": [\n        \"--a\"\n      ],\n      \"env\": {}\n    }\n  }\n}\n",
		},
		{
			name:   "HTTP to stdio: where the address was; comments and trailing commas stay",
			fields: stdio,
			in:     "{\n  \"mcpServers\": {\n    \"tairseach\": {\n      // where it runs\n      \"url\": \"http://old/mcp\",\n      \"headers\": {\"Authorization\": \"Bearer x\"},\n      \"disabled\": true, // for now\n    },\n  },\n}\n",
			want:   "{\n  \"mcpServers\": {\n    \"tairseach\": {\n      \"command\": \"/bin/ts\",\n      \"args\": [\n        \"--a\"\n      ],\n      // where it runs\n      \"disabled\": true, // for now\n    },\n  },\n}\n",
		},
		{
			name:   "stdio to HTTP: duplicates go",
			fields: http,
			in:     "{\n  \"mcpServers\": {\n    \"tairseach\": {\n      \"command\": \"a\",\n      \"env\": {},\n      \"command\": \"b\"\n    }\n  }\n}\n",
			want:   "{\n  \"mcpServers\": {\n    \"tairseach\": {\n      \"env\": {},\n      \"url\": \"http://h/mcp\",\n      \"headers\": {\n        \"Authorization\": \"Bearer t\"\n      }\n    }\n  }\n}\n",
		},
		{
			name:   "no token: the Authorization header goes, and headers with it when empty",
			fields: noAuth,
			in:     `{"mcpServers": {"tairseach": {"url": "http://h/mcp", "headers": {"Authorization": "Bearer x"}, "env": {}}}}`,
			want:   `{"mcpServers": {"tairseach": {"url": "http://h/mcp", "env": {}}}}`,
		},
		{
			name:   "no token: a header of the user's stays",
			fields: noAuth,
			in:     `{"mcpServers": {"tairseach": {"url": "http://h/mcp", "headers": {"Authorization": "Bearer x", "X": "y"}, "env": {}}}}`,
			want:   `{"mcpServers": {"tairseach": {"url": "http://h/mcp", "headers": {"X": "y"}, "env": {}}}}`,
		},
		{
			name:   "headers that are no object, and a type, which Cursor's entries do not have",
			fields: http,
			in:     `{"mcpServers": {"tairseach": {"url": "http://h/mcp", "headers": "bad", "type": "sse"}}}`,
			want:   `{"mcpServers": {"tairseach": {"url": "http://h/mcp", "headers": {"Authorization": "Bearer t"}}}}`,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ParseJSON([]byte(tt.in), "mcpServers", "tairseach")
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Set(tt.fields); err != nil {
				t.Fatal(err)
			}
			if got := string(f.Bytes()); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// FuzzJSONFile: whatever the file, install and uninstall never panic,
// write a file that parses with the entry as meant (the members install
// owns set, the others as they were), switch the entry between stdio and
// HTTP, change nothing when run again, and leave the rest's values as they
// were; a non-empty server map without the entry comes back byte for byte.
func FuzzJSONFile(f *testing.F) {
	addSeeds(f, "*.json*")
	f.Add("{\n  \"mcpServers\": {\"a\": 1,}, // x\n}")
	f.Add("{\"mcpServers\": {\"tairseach\": 1, \"tairseach\": 2}}")
	f.Add(`{"mcpServers": {"tairseach": {"url": "x", "env": {}, "command": "a", "command": "b", "headers": {"X": "y"}}}}`)
	f.Add("{\n  \"mcp\": {\"servers\": null},\n}")
	f.Add("{\n  // mine\n  \"mcp\": {\n    \"sessionIdleTtlMs\": 0,\n  },\n}\n")
	entries := [][]Field{owned(true, "", ""), owned(true, "http://127.0.0.1:8765/mcp", "t")}
	f.Fuzz(func(t *testing.T, in string) {
		for _, key := range []string{"mcpServers", "servers", "mcp.servers"} {
			jf, err := ParseJSON([]byte(in), key, "tairseach")
			if err != nil {
				return
			}
			p, err := jf.servers()
			if err != nil {
				return
			}
			obj := p.obj
			exact := obj != nil && len(obj.Members) > 0 && lastMember(obj, "tairseach") < 0
			installed := []byte(in)
			for _, fields := range entries {
				old, _ := decodedEntry(t, installed, key).(map[string]any)
				if err := jf.Set(fields); err != nil {
					t.Fatalf("set: %v", err)
				}
				installed = jf.Bytes()
				if jf, err = ParseJSON(installed, key, "tairseach"); err != nil {
					t.Fatalf("the installed file does not parse: %v\n%s", err, installed)
				}
				if got, want := decodedEntry(t, installed, key), Merge(old, fields); !reflect.DeepEqual(got, any(want)) {
					t.Fatalf("the entry reads %v, want %v:\n%s", got, want, installed)
				}
				if err := jf.Set(fields); err != nil || string(jf.Bytes()) != string(installed) {
					t.Fatalf("set again: %v\n%s\nwant\n%s", err, jf.Bytes(), installed)
				}
			}
			if err := jf.Remove(); err != nil {
				t.Fatal(err)
			}
			back := jf.Bytes()
			if exact && string(back) != in {
				t.Fatalf("not restored byte for byte:\n%q\ninstalled\n%q\nback\n%q", in, installed, back)
			}
			if _, err := ParseJSON(back, key, "tairseach"); err != nil {
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
	prune(doc, strings.Split(key, "."))
	b, _ := json.Marshal(doc)
	return b
}

// prune takes the entry out of the server map at path in obj, and each
// level of the path that this leaves empty or that is null.
func prune(obj map[string]any, path []string) {
	switch v, ok := obj[path[0]].(map[string]any); {
	case ok && len(path) == 1:
		delete(v, "tairseach")
		if len(v) == 0 {
			delete(obj, path[0])
		}
	case ok:
		if prune(v, path[1:]); len(v) == 0 {
			delete(obj, path[0])
		}
	case obj[path[0]] == nil:
		delete(obj, path[0])
	}
}

// decodedEntry is the tairseach entry of a JSONC file, decoded as a JSON
// parser reads it; nil when there is none.
func decodedEntry(t *testing.T, data []byte, key string) any {
	t.Helper()
	std, err := hujson.Standardize(slices.Clone(data))
	if err != nil || len(bytes.TrimSpace(std)) == 0 {
		return nil
	}
	var doc map[string]any
	if err := json.Unmarshal(std, &doc); err != nil {
		t.Fatalf("%v\n%s", err, std)
	}
	servers := doc
	for _, k := range strings.Split(key, ".") {
		servers, _ = servers[k].(map[string]any)
	}
	return servers["tairseach"]
}

// TestJSONNestedMap adds the entry to a server map two levels down
// (OpenClaw's mcp.servers), making the levels that are missing.
func TestJSONNestedMap(t *testing.T) {
	fields := []Field{{Key: "command", Value: "/bin/ts"}, {Key: "args", Value: []string{"--a"}}}
	for _, tt := range []struct{ in, installed, err string }{
		{in: ``, installed: "{\n  \"mcp\": {\n    \"servers\": {\n      \"tairseach\": {\n        \"command\": \"/bin/ts\",\n        \"args\": [\n          \"--a\"\n        ]\n      }\n    }\n  }\n}\n"},
		{in: `{"a": 1}`, installed: `{"a": 1, "mcp": {"servers": {"tairseach": {"command": "/bin/ts", "args": ["--a"]}}}}`},
		{in: `{"mcp": {"sessionIdleTtlMs": 0}}`, installed: `{"mcp": {"sessionIdleTtlMs": 0, "servers": {"tairseach": {"command": "/bin/ts", "args": ["--a"]}}}}`},
		{in: `{"mcp": {"servers": null}}`, installed: `{"mcp": {"servers": {"tairseach": {"command": "/bin/ts", "args": ["--a"]}}}}`},
		{in: `{"mcp": null}`, installed: `{"mcp": {"servers": {"tairseach": {"command": "/bin/ts", "args": ["--a"]}}}}`},
		{
			in:        "{\n  // mine\n  \"mcp\": {\n    \"servers\": {\n      \"x\": {}, // theirs\n    },\n  },\n}\n",
			installed: "{\n  // mine\n  \"mcp\": {\n    \"servers\": {\n      \"x\": {}, // theirs\n      \"tairseach\": {\n        \"command\": \"/bin/ts\",\n        \"args\": [\n          \"--a\"\n        ]\n      },\n    },\n  },\n}\n",
		},
		{
			in:        "{\n  \"mcp\": {\n    \"sessionIdleTtlMs\": 0\n  }\n}",
			installed: "{\n  \"mcp\": {\n    \"sessionIdleTtlMs\": 0,\n    \"servers\": {\n      \"tairseach\": {\n        \"command\": \"/bin/ts\",\n        \"args\": [\n          \"--a\"\n        ]\n      }\n    }\n  }\n}",
		},
		{in: `{"mcp": "x"}`, err: `"mcp" is a string, not an object`},
		{in: `{"mcp": {"servers": []}}`, err: `"mcp.servers" is an array, not an object of servers`},
	} {
		f, err := ParseJSON([]byte(tt.in), "mcp.servers", "tairseach")
		if err != nil {
			t.Fatalf("%q: %v", tt.in, err)
		}
		err = f.Set(fields)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || string(f.Bytes()) != tt.installed {
			t.Errorf("%q: %v\n%s\nwant\n%s", tt.in, err, f.Bytes(), tt.installed)
		}
		if has, err := f.Has(); !has || err != nil {
			t.Errorf("%q: Has after Set: %v, %v", tt.in, has, err)
		}
	}
}

// TestJSONTake takes the entry out of another map, keeping every other
// byte, and the map when it is left empty.
func TestJSONTake(t *testing.T) {
	for _, tt := range []struct {
		in, out string
		members []Member
		left    int
	}{
		{in: `{"a": 1}`, out: `{"a": 1}`},
		{
			in:      "{\n  // mine\n  \"a\": 1,\n  \"mcpServers\": {\"tairseach\": {\"command\": \"x\", /* c */ \"env\": {\"K\": 1}, \"command\": \"y\"}},\n}\n",
			out:     "{\n  // mine\n  \"a\": 1,\n}\n",
			members: []Member{{"env", json.RawMessage(`{"K": 1}`)}, {"command", json.RawMessage(`"y"`)}},
		},
		{
			in:      "{\n  \"mcpServers\": {\n    \"other\": {},\n    \"tairseach\": 3\n  }\n}",
			out:     "{\n  \"mcpServers\": {\n    \"other\": {}\n  }\n}",
			members: nil,
			left:    1,
		},
	} {
		f, err := ParseJSON([]byte(tt.in), "mcp.servers", "tairseach")
		if err != nil {
			t.Fatal(err)
		}
		members, found, left, err := f.Take("mcpServers")
		if err != nil || found != strings.Contains(tt.in, "tairseach") || left != tt.left || !reflect.DeepEqual(members, tt.members) || string(f.Bytes()) != tt.out {
			t.Errorf("%q: %v, %d, %v, %q\n%s\nwant %q\n%s", tt.in, found, left, err, members, f.Bytes(), tt.members, tt.out)
		}
	}
}
