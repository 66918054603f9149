package observe

import (
	"encoding/hex"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The audit line is written by hand; it must be what json.Marshal writes
// of the record, byte for byte, for every field empty or odd.
func TestAuditLineBytes(t *testing.T) {
	code := int64(-32603)
	odd := "a<b>&c\u2028d\"e\\f\x01g\xffh é"
	clients := []*mcp.Implementation{nil, {Name: "claude-code", Version: "2.1.0"}, {Name: odd, Version: odd, Title: "T"}}
	for _, l := range []auditLine{
		{Time: "2026-11-25T15:51:46.522117281Z", CallID: "00f067aa0ba902b7", TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", Transport: "stdio", Tool: "tairseach_demo_echo", ArgsSHA256: "ab", Outcome: "ok", DurationMs: 0.658, ResultBytes: 162},
		{Time: "t", CallID: "<odd>", Transport: "http", Session: "s1", Protocol: "2025-11-25", RequestID: json.RawMessage(`"id <1>"`), Tool: odd,
			Method: "demo.echo", Socket: "/tmp/s.sock", ArgsSHA256: "cd", Args: json.RawMessage(`{"a":"<x>&\u2028","b":[1,2.5e3]}`),
			Outcome: "error", Code: &code, DurationMs: 12345.001, ResultBytes: 0},
		{Time: "t", Transport: "cli", RequestID: json.RawMessage(` 9007199254740993 `), Args: json.RawMessage("{ \"x\" : \"\\u2029\" }"), Outcome: "refused", DurationMs: 0},
		{Time: "t", Transport: "stdio", RequestID: json.RawMessage(`-0`), Outcome: "unanswered", DurationMs: 1e-3, ResultBytes: 1 << 40},
	} {
		for _, c := range clients {
			l.Client = c
			want, err := json.Marshal(l)
			if err != nil {
				t.Fatal(err)
			}
			var cj []byte
			if c != nil {
				cj, _ = json.Marshal(c)
			}
			got, ok := appendLine([]byte("prefix"), &l, cj)
			if !ok {
				t.Fatalf("appendLine refused %+v", l)
			}
			if got = got[len("prefix"):]; string(got) != string(want) {
				t.Errorf("appendLine wrote\n%s\njson.Marshal writes\n%s", got, want)
			}

		}
	}
	for _, d := range []float64{1e21, 1e-7} {
		if _, ok := appendLine(nil, &auditLine{DurationMs: d}, nil); ok {
			t.Errorf("appendLine took duration %g, which json.Marshal writes with an exponent", d)
		}
	}
}

// canonicalJSON walks the bytes; canonicalSlow is encoding/json. They
// must agree on every input, so that a call hashes the same either way.
func FuzzCanonicalJSON(f *testing.F) {
	for _, s := range []string{`{ "b": 1.50, "a": {"d": [1, 2], "c": "<x>"} }`, `{}`, `[]`, `not json`, `{"a":1,"a":2}`,
		`{"\u0062":1,"a":[true,false,null,"\u2028\ud800"]}`, "{\"\xff\":\"\xfe\"}", `{"a":1} x`, ` "s" `, `-0.0e+5`,
		`{"query":"anna","limit":5,"fields":["name","email"]}`, `[[[[{"z":{"y":[]}}]]]]`, `{"é":1,"e":2,"E":3}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, want := canonicalJSON(b), canonicalSlow(b)
		if string(got) != string(want) {
			t.Fatalf("canonicalJSON(%q) = %q, encoding/json: %q", b, got, want)
		}
	})
}

// Each level the one-pass canonical form walks scans its value again, so
// nesting deeper than canonicalDepth goes to encoding/json, which reads it
// once: a deeply nested argument must not cost the size times the depth.
func TestCanonicalDeepGoesToEncodingJSON(t *testing.T) {
	nest := func(depth int) []byte {
		b := []byte(`{"a":`)
		for range depth {
			b = append(b, '[')
		}
		b = append(b, `"x"`...)
		for range depth {
			b = append(b, ']')
		}
		return append(b, '}')
	}
	if _, ok := appendCanonical(nil, nest(canonicalDepth-2), 0); !ok {
		t.Errorf("appendCanonical refused %d levels of nesting", canonicalDepth-1)
	}
	if _, ok := appendCanonical(nil, nest(canonicalDepth), 0); ok {
		t.Errorf("appendCanonical walked %d levels of nesting; past %d it must leave them to encoding/json", canonicalDepth+1, canonicalDepth)
	}
	deep := nest(5000)
	if got, want := canonicalJSON(deep), canonicalSlow(deep); string(got) != string(want) {
		t.Errorf("canonicalJSON of 5,000 levels differs from encoding/json's")
	}
}

// A clientInfo is written as it is when the call is recorded, even if the
// same value was recorded before with other fields: the JSON kept of the
// last one is used only for one with the same fields.
func TestAuditLineClientAsRecorded(t *testing.T) {
	a := &Audit{}
	impl := &mcp.Implementation{Name: "first", Version: "1"}
	now := time.Now()
	o := &Call{start: now, end: now.Add(1500 * time.Microsecond), info: CallInfo{Transport: "stdio", Client: impl}, tool: "t", args: json.RawMessage(`{}`), outcome: "ok"}
	for _, name := range []string{"first", "first", "second", "second"} {
		impl.Name = name
		var l struct{ Client mcp.Implementation }
		b, _ := a.line(nil, o)
		if err := json.Unmarshal(b, &l); err != nil || !reflect.DeepEqual(l.Client, *impl) {
			t.Fatalf("the line's client is %+v (%v), want %+v", l.Client, err, *impl)
		}
	}
	// The copy compared is of every field: a field the go-sdk adds must be
	// compared too.
	if n := reflect.TypeFor[mcp.Implementation]().NumField(); n != 6 {
		t.Errorf("mcp.Implementation has %d fields; sameClient compares 6", n)
	}
}

// A line written from the bytes of the time, the ids and the hash is the
// line written from their strings.
func TestAuditLineFromBytes(t *testing.T) {
	at := time.Date(2026, 11, 28, 21, 3, 4, 500600, time.FixedZone("x", 3600))
	id, trace, sum := [8]byte{0, 0xf0, 0x67}, [16]byte{0x4b, 0xf9, 0xff}, [32]byte{1, 2, 0xab}
	want := auditLine{Time: at.UTC().Format(time.RFC3339Nano), CallID: hex.EncodeToString(id[:]), TraceID: hex.EncodeToString(trace[:]),
		Transport: "stdio", Tool: "t", ArgsSHA256: hex.EncodeToString(sum[:]), Outcome: "ok", DurationMs: 1.5}
	got := auditLine{at: at, callID: &id, traceID: &trace, sum: &sum, Transport: "stdio", Tool: "t", Outcome: "ok", DurationMs: 1.5}
	w, _ := appendLine(nil, &want, nil)
	g, _ := appendLine(nil, &got, nil)
	if string(g) != string(w) {
		t.Errorf("from bytes\n%s\nfrom strings\n%s", g, w)
	}
	got.traceID, want.TraceID = nil, ""
	w, _ = appendLine(nil, &want, nil)
	g, _ = appendLine(nil, &got, nil)
	if string(g) != string(w) || strings.Contains(string(g), "trace_id") {
		t.Errorf("without a trace: from bytes\n%s\nfrom strings\n%s", g, w)
	}
}
