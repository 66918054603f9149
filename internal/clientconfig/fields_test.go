package clientconfig

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// owned are the members install owns in a JSON entry, in Cursor's words
// (Claude Code's with typed): a command, /bin/ts --a, when address is "";
// else the address and the token's header, none without a token. The
// members of the other form are absent.
func owned(typed bool, address, token string) []Field {
	typ, command, args := Field{Key: "type"}, Field{Key: "command"}, Field{Key: "args"}
	url, headers := Field{Key: "url"}, Field{Key: "headers"}
	if address == "" {
		typ.Value, command.Value, args.Value = "stdio", "/bin/ts", []string{"--a"}
	} else {
		auth := Field{Key: "Authorization"}
		if token != "" {
			auth.Value = "Bearer " + token
		}
		typ.Value, url.Value, headers.Sub = "http", address, []Field{auth}
	}
	if !typed {
		typ.Value = nil
	}
	return []Field{typ, command, args, url, headers}
}

// tomlOwned are the members install owns in Codex's entries: those of set,
// the others absent.
func tomlOwned(set []Field) []Field {
	out := []Field{{Key: "command"}, {Key: "args"}, {Key: "url"}, {Key: "http_headers"}}
	for i, f := range out {
		if j := slices.IndexFunc(set, func(g Field) bool { return g.Key == f.Key }); j >= 0 {
			out[i] = set[j]
		}
	}
	return out
}

// addSeeds adds the files of testdata matching pattern to f's corpus.
func addSeeds(f *testing.F, pattern string) {
	names, err := filepath.Glob(filepath.Join("testdata", pattern))
	if err != nil || len(names) == 0 {
		f.Fatalf("no seeds in testdata/%s: %v", pattern, err)
	}
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
}
