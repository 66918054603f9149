package stdio

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzQuickDecode holds quickDecode and scanParams to encoding/json: what
// they accept, encoding/json decodes the same way.
func FuzzQuickDecode(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"x":1}}}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"t","arguments":{},"_meta":{"progressToken":1}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"\u0041","method":"p\u0069ng"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","name":"u"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"na\u006de":"t"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		in, ok := quickDecode(line)
		if !ok {
			return
		}
		var w struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Method  *string         `json:"method"`
			Params  json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(line, &w); err != nil || w.JSONRPC != "2.0" || w.Method == nil ||
			*w.Method != in.method || !bytes.Equal(w.ID, in.id) || !bytes.Equal(w.Params, in.params) {
			t.Fatalf("quickDecode(%s) = %+v; encoding/json: %v %+v", line, in, err, w)
		}
		p, ok := scanParams(in.params)
		var m map[string]json.RawMessage
		mok := len(in.params) > 0 && in.params[0] == '{' && json.Unmarshal(in.params, &m) == nil
		if ok != mok {
			t.Fatalf("scanParams(%s) ok %v, encoding/json %v", in.params, ok, mok)
		}
		if !ok || p.other {
			return
		}
		for k := range m {
			if k != "name" && k != "arguments" && k != "_meta" {
				t.Fatalf("scanParams(%s) missed member %q", in.params, k)
			}
		}
		if !bytes.Equal(p.name, m["name"]) || !bytes.Equal(p.args, m["arguments"]) || !bytes.Equal(p.meta, m["_meta"]) {
			t.Fatalf("scanParams(%s) = %+v, encoding/json %v", in.params, p, m)
		}
		if name, ok := toolName(p.name); p.hasName && ok {
			var want string
			if json.Unmarshal(p.name, &want) != nil || want != name {
				t.Fatalf("toolName(%s) = %q, encoding/json %q", p.name, name, want)
			}
		}
	})
}

// The memo of the last _meta classifies every _meta as classify does,
// whatever came before it.
func TestMetaMemoClassifiesAsClassify(t *testing.T) {
	metas := []string{
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"x","version":"1"}}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":"x"}`,
		`{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}`,
		`{"progressToken":1}`,
		``,
		`[]`,
	}
	var m metaMemo
	for round := range 2 {
		for i, a := range metas {
			for _, b := range []string{a, metas[(i+1)%len(metas)], a} {
				wantNew, wantValid := classify(decodeMeta(json.RawMessage(b)))
				gotNew, gotValid := m.revision(json.RawMessage(b))
				if gotNew != wantNew || gotValid != wantValid {
					t.Errorf("round %d, %s: memo says (%v, %v), classify (%v, %v)", round, b, gotNew, gotValid, wantNew, wantValid)
				}
			}
		}
	}
}
