package mcpserver

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/internal/demo"
	"github.com/geilt/tairseach-mcp/mcpserver/parts"
	"github.com/geilt/tairseach-mcp/mcpserver/policy"
	"github.com/geilt/tairseach-mcp/mcpserver/streamable"
)

// nextCall is the call a part's note says returns the next part.
var nextCall = regexp.MustCompile(`Next: call (\S+) with (\{"id": "(r[a-z2-7]+)", "part": (\d+)\})`)

// partOf is a result sent in parts, as the model reads it: the part, and
// the note after it.
func partOf(t *testing.T, res *mcp.CallToolResult) (part []byte, note string) {
	t.Helper()
	if res.IsError || len(res.Content) != 2 {
		t.Fatalf("want a part and its note, got %s", resultText(res))
	}
	return []byte(res.Content[0].(*mcp.TextContent).Text), res.Content[1].(*mcp.TextContent).Text
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// TestResultInPartsOnEveryPath: an address book larger than the client
// takes comes as whole contacts, with a note saying how much is left and
// the call that returns the next part; following the notes returns every
// contact once, in order, each part within the budget; another session
// cannot read the parts.
func TestResultInPartsOnEveryPath(t *testing.T) {
	const book = 2000
	sock := func() string { _, p := startDemoWith(t, demo.Options{AddressBook: book}); return p }()
	for _, rd := range reqPaths() {
		t.Run(rd.name, func(t *testing.T) {
			srv := New(Config{DefaultSocket: sock, Logger: zerolog.Nop(), Prefix: "tairseach_",
				ToolMode: map[bool]string{true: ToolModeDiscover}[rd.discover != ""]}, loadExample(t))
			t.Cleanup(func() { srv.Close() })
			e := &pathEnv{t: t, path: rd, srv: srv}
			if rd.transport == "http" {
				e.http = httptest.NewServer(srv.NewHTTPHandler(streamable.Config{Stateless: rd.stateless}))
				t.Cleanup(func() { e.http.CloseClientConnections(); e.http.Close() })
			}
			ctx := context.Background()
			cs := e.connect(nil, nil)
			res, err := e.call(ctx, cs, "contacts.list", map[string]any{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			part, note := partOf(t, res)
			budget, _ := parts.BudgetFor("road-client")
			if len(part)+len(note) > budget {
				t.Errorf("part 1 and its note are %d bytes, over the budget of %d", len(part)+len(note), budget)
			}
			for _, want := range []string{"part 1 of ", "items 1–", " of 2,000 of the array at .contacts", "Left out: ", "tairseach_contacts_list also pages itself: it takes offset, limit"} {
				if !strings.Contains(note, want) {
					t.Errorf("the note does not say %q: %s", want, note)
				}
			}
			ids := []string{}
			seen := 0
			for n := 1; ; n++ {
				var got struct {
					Contacts []struct{ ID string }
					Count    int
				}
				if err := json.Unmarshal(part, &got); err != nil || got.Count != book || len(got.Contacts) == 0 {
					t.Fatalf("part %d is not whole contacts of the address book: %v: %.200s", n, err, part)
				}
				for _, c := range got.Contacts {
					seen++
					if want := "c-" + leftPad(seen); c.ID != want {
						t.Fatalf("part %d: contact %s where %s comes", n, c.ID, want)
					}
				}
				m := nextCall.FindStringSubmatch(note)
				if m == nil {
					if !strings.Contains(note, "This is the last part.") {
						t.Fatalf("part %d's note has no next call and does not say it is the last: %s", n, note)
					}
					break
				}
				if k, _ := strconv.Atoi(m[4]); k != n+1 || m[1] != "tairseach_result_part" {
					t.Fatalf("part %d's note: %s", n, note)
				}
				ids = append(ids, m[3])
				var args map[string]any
				json.Unmarshal([]byte(m[2]), &args)
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: m[1], Arguments: args})
				if err != nil {
					t.Fatal(err)
				}
				part, note = partOf(t, res)
				if len(part)+len(note) > budget {
					t.Errorf("part %d and its note are %d bytes, over the budget of %d", n+1, len(part)+len(note), budget)
				}
			}
			if seen != book {
				t.Fatalf("the parts held %d contacts, want %d", seen, book)
			}
			// Another session cannot read them; without sessions (stateless
			// HTTP, the 2026-07-28 protocol) the id is what a reader must
			// hold, under the same policy.
			other := e.connect(nil, nil)
			res, err = other.CallTool(ctx, &mcp.CallToolParams{Name: "tairseach_result_part", Arguments: map[string]any{"id": ids[0], "part": 2}})
			sessionless := rd.transport == "http" && (rd.stateless || rd.protocol >= "2026-07-28")
			if err != nil || res.IsError == sessionless {
				t.Fatalf("another session (sessionless %v) reading a held result: %v %s", sessionless, err, resultText(res))
			}
			if !sessionless && !strings.Contains(resultText(res), "no result \""+ids[0]+"\" is held for this session") {
				t.Fatalf("another session: %s", resultText(res))
			}
		})
	}
}

func leftPad(n int) string { s := strconv.Itoa(n); return strings.Repeat("0", 5-len(s)) + s }

// TestHeldResultIsPrivateToItsSelection: a session of a header selection
// cannot read the parts of a session of the server's own policy, nor the
// other way round.
func TestHeldResultIsPrivateToItsSelection(t *testing.T) {
	_, sock := startDemoWith(t, demo.Options{AddressBook: 1000})
	srv := New(Config{DefaultSocket: sock, Logger: zerolog.Nop(), Prefix: "tairseach_"}, loadExample(t))
	t.Cleanup(func() { srv.Close() })
	ts := httptest.NewServer(srv.NewHTTPHandler(streamable.Config{}))
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
	connect := func(h http.Header) *mcp.ClientSession {
		tr := &mcp.StreamableClientTransport{Endpoint: ts.URL + streamable.MCPPath, HTTPClient: &http.Client{Transport: headerTransport{h}}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(), tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	own, sel := connect(http.Header{}), connect(http.Header{policy.HeaderToolsets: {"contacts"}})
	idOf := func(cs *mcp.ClientSession) string {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "tairseach_contacts_list", Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		_, note := partOf(t, res)
		m := nextCall.FindStringSubmatch(note)
		if m == nil {
			t.Fatalf("no next call: %s", note)
		}
		return m[3]
	}
	read := func(cs *mcp.ClientSession, id string) *mcp.CallToolResult {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "tairseach_result_part", Arguments: map[string]any{"id": id, "part": 2}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for _, tt := range []struct {
		name         string
		maker, other *mcp.ClientSession
	}{{"own then selection", own, sel}, {"selection then own", sel, own}} {
		id := idOf(tt.maker)
		if res := read(tt.maker, id); res.IsError {
			t.Fatalf("%s: its own session cannot read it: %s", tt.name, resultText(res))
		}
		if res := read(tt.other, id); !res.IsError {
			t.Fatalf("%s: the other session read it", tt.name)
		}
	}
}

// TestHeldResultsStayUnderTheirBound: large results held for one session,
// seven times the bound in all, never hold more than HeldBytes, though they
// come near it; the newest can be read. (40 results of 376 KB show it as
// 1,000 did, which took 4 minutes under -race.)
func TestHeldResultsStayUnderTheirBound(t *testing.T) {
	_, sock := startDemoWith(t, demo.Options{AddressBook: 2000})
	const bound = 2 << 20
	srv := New(Config{DefaultSocket: sock, Logger: zerolog.Nop(), Prefix: "tairseach_", HeldBytes: bound}, loadExample(t))
	t.Cleanup(func() { srv.Close() })
	cs := session(t, srv, nil)
	var last string
	peak := 0
	for range 40 {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "tairseach_contacts_list", Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		_, note := partOf(t, res)
		last = nextCall.FindStringSubmatch(note)[3]
		used := srv.pipe.HeldBytes()
		if used > bound {
			t.Fatalf("%d bytes held, over the bound of %d", used, bound)
		}
		peak = max(peak, used)
	}
	if peak < bound/2 {
		t.Errorf("at most %d bytes held: the results never came near the bound of %d, so nothing had to go", peak, bound)
	}
	res, _ := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "tairseach_result_part", Arguments: map[string]any{"id": last, "part": 2}})
	if res.IsError {
		t.Fatalf("the newest result: %s", resultText(res))
	}
}
