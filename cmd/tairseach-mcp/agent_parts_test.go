package main

// What an agent's model gets of a result larger than the agent hands its
// model whole (Gemini CLI here, OpenClaw in openclaw_parts_test.go): the
// bridge sends the first part, whole entries, and a note naming the call
// that returns the next part; a model that makes that call gets the
// entries that follow. And what it gets of a result the agent takes whole,
// and of a tool that answers a top-level JSON array. All is read on the
// model's side, in the tool results the fake model was sent.

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/geilt/tairseach-mcp/mcpserver/parts"
)

// addressBook is contacts.list's result from a backend with an address
// book, as the bridge sends it whole (--result-budget off): its text, and
// each contact's JSON in it.
func addressBook(t *testing.T, e env) (whole string, contacts []json.RawMessage) {
	t.Helper()
	cs := connect(t, e, "2025-11-25", "--log-level", "warn", "--result-budget", "off")
	res := callTool(t, cs, "tairseach_contacts_list", map[string]any{})
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("contacts.list, sent whole: isError %v, %d blocks: %.500s", res.IsError, len(res.Content), text(res))
	}
	whole = text(res)
	var list struct{ Contacts []json.RawMessage }
	if err := json.Unmarshal([]byte(whole), &list); err != nil || len(list.Contacts) == 0 {
		t.Fatalf("contacts.list, sent whole: %v: %.500s", err, whole)
	}
	return whole, list.Contacts
}

// modelPart is one part of a result as a model got it: the part, and the
// bridge's note after it.
type modelPart struct{ data, note string }

// partsAgent is an agent as the bridge's note names it, and its budget.
type partsAgent struct {
	name   string
	budget int
}

// checkParts checks what a model got of contacts.list's result, book
// (each contact as the bridge sends the list whole), in two tool results:
// the first part, as JSON of the list's shape holding the first contacts
// whole and unchanged, and a note saying how much was left out and which
// call returns part 2; then, from that one call, part 2, whose contacts
// follow part 1's.
func checkParts(t *testing.T, agent partsAgent, whole string, book []json.RawMessage, got []modelPart) {
	t.Helper()
	if len(got) != 2 {
		t.Fatalf("the model got %d tool results, want 2 (contacts.list's part 1, then part 2 by the call its note names)", len(got))
	}
	first := partContacts(t, "part 1", got[0].data, book, 0)
	note := got[0].note
	total := len(got[0].data) + len(got[0].note)
	if total > agent.budget {
		t.Errorf("the model got %d bytes in part 1 and its note, over %s's budget of %d", total, agent.name, agent.budget)
	}
	for _, want := range []string{
		fmt.Sprintf("This result of tairseach_contacts_list is %s bytes, more than %s hands its model at once (%s).", parts.Count(len(whole)), agent.name, parts.Count(agent.budget)),
		fmt.Sprintf("items 1–%s of %s of the array at .contacts.", parts.Count(len(first)), parts.Count(len(book))),
		// What the model was not given is what the bridge left out: the
		// part reached it whole.
		fmt.Sprintf("Left out: %s bytes.", parts.Count(len(whole)-len(got[0].data))),
		"tairseach_contacts_list also pages itself: it takes offset, limit.",
	} {
		if !strings.Contains(note, want) {
			t.Errorf("part 1's note does not say %q:\n%s", want, note)
		}
	}
	next := nextCall.FindStringSubmatch(note)
	if next == nil || next[1] != "tairseach_result_part" || next[4] != "2" {
		t.Fatalf("part 1's note names no call of tairseach_result_part for part 2:\n%s", note)
	}

	of := partsOf.FindStringSubmatch(note)
	if of == nil {
		t.Fatalf("part 1's note does not say how many parts there are:\n%s", note)
	}

	second := partContacts(t, "part 2", got[1].data, book, len(first))
	id := next[3]
	if want := fmt.Sprintf("Above is part 2 of %s of the result %s of tairseach_contacts_list: items %s–%s of %s of the array at .contacts.",
		of[1], id, parts.Count(len(first)+1), parts.Count(len(first)+len(second)), parts.Count(len(book))); !strings.Contains(got[1].note, want) {
		t.Errorf("part 2's note does not say %q:\n%s", want, got[1].note)
	}
	last := len(first)+len(second) == len(book)
	if m := nextCall.FindStringSubmatch(got[1].note); last != (m == nil) || (m != nil && (m[3] != id || m[4] != "3")) {
		t.Errorf("part 2's note names the wrong next call (last part: %v):\n%s", last, got[1].note)
	}
}

// partsOf finds how many parts a result is in, in its first note.
var partsOf = regexp.MustCompile(`Above is part 1 of ([0-9,]+): `)

// partContacts checks that data, a part as the model got it, is JSON of
// contacts.list's shape whose contacts are book's from the one after
// skip, unchanged, and returns them.
func partContacts(t *testing.T, what, data string, book []json.RawMessage, skip int) []json.RawMessage {
	t.Helper()
	var part struct {
		Contacts []json.RawMessage
		Count    *int
	}
	if err := json.Unmarshal([]byte(data), &part); err != nil {
		t.Fatalf("%s, as the model got it, is not JSON: %v\n%.300s … %.300s", what, err, data, data[max(0, len(data)-300):])
	}
	if part.Count == nil || *part.Count != len(book) || len(part.Contacts) == 0 || skip+len(part.Contacts) > len(book) {
		t.Fatalf("%s has %d contacts and count %v, after %d of %d", what, len(part.Contacts), part.Count, skip, len(book))
	}
	for i, c := range part.Contacts {
		var contact struct{ ID string }
		_ = json.Unmarshal(c, &contact)
		if want := fmt.Sprintf("c-%05d", skip+i+1); contact.ID != want || string(c) != string(book[skip+i]) {
			t.Fatalf("%s's contact %d is %s, want %s as the whole list has it:\n%s\n%s", what, i+1, contact.ID, want, c, book[skip+i])
		}
	}
	return part.Contacts
}

// geminiBlocks are the text blocks of a tool result as Gemini CLI hands
// them to its model (response is the functionResponse's response): each
// in <untrusted_context> tags, on lines of their own, a closing tag in the
// text escaped.
func geminiBlocks(t *testing.T, response string) []string {
	t.Helper()
	out, errText := modelOutput(response)
	if errText != "" {
		t.Fatalf("Gemini CLI gave its model an error for the result: %.2000s", errText)
	}
	if strings.HasPrefix(out, "Output too large") {
		t.Fatalf("Gemini CLI truncated the result: %.500s", out)
	}
	const open, end = "<untrusted_context>\n", "\n</untrusted_context>"
	var blocks []string
	for rest := out; ; {
		if !strings.HasPrefix(rest, open) {
			t.Fatalf("the result as the model got it, after %d blocks, is not in <untrusted_context> tags: %.500q", len(blocks), rest)
		}
		i := strings.Index(rest, end)
		if i < 0 {
			t.Fatalf("a block the model got is not closed: %.500q", rest)
		}
		blocks = append(blocks, strings.ReplaceAll(rest[len(open):i], "&lt;/untrusted_context&gt;", "</untrusted_context>"))
		rest = rest[i+len(end):]
		if rest == "" {
			return blocks
		}
		if rest[0] != '\n' {
			t.Fatalf("the model got something after block %d: %.500q", len(blocks), rest)
		}
		rest = rest[1:]
	}
}

// TestGeminiCLIResultParts runs Gemini CLI with the bridge against the demo
// backend with an address book, and a model that lists the contacts and
// then makes the one call the result's note names. Of 40 contacts, which
// Gemini CLI takes whole, the model gets the whole list unchanged and
// makes no call. Of 2,000 (376 KB) and 10,000 (1.9 MB), which Gemini CLI
// would cut to its first 8,000 and last 32,000 characters, it gets part 1
// as JSON of whole contacts from the first, a note saying what is left,
// and part 2 from the call the note names.
func TestGeminiCLIResultParts(t *testing.T) {
	bin := geminiCLI(t)
	const list = "mcp_tairseach_tairseach_contacts_list"
	for _, n := range []int{40, 2_000, 10_000} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			t.Parallel() // its time is mostly Gemini CLI starting up
			e := newEnv(t)
			startBackend(t, e.socket, "--address-book", strconv.Itoa(n))
			whole, book := addressBook(t, e)
			model := &fakeModel{wishes: []geminiWish{{list, map[string]any{}}}, follow: 1}
			api := httptest.NewServer(model)
			defer api.Close()

			out := runGemini(t, bin, geminiHome(t, e.args("--log-level", "warn")), api.URL, "List all my contacts.")
			_, responses, _ := model.session()
			var got []modelPart
			for i, r := range responses {
				blocks := geminiBlocks(t, r)
				switch {
				case len(blocks) == 1 && !strings.HasPrefix(blocks[0], "[tairseach-mcp]"):
					got = append(got, modelPart{data: blocks[0]})
				case len(blocks) == 2:
					got = append(got, modelPart{data: blocks[0], note: blocks[1]})
				default:
					t.Fatalf("tool result %d as the model got it has %d blocks: %.1000q", i+1, len(blocks), blocks)
				}
			}
			t.Logf("%d contacts, %d bytes: the model got %d results; tools %+v", n, len(whole), len(got), out.Stats.Tools)
			if len(whole) <= 36_000 {
				if len(got) != 1 || got[0].data != whole || got[0].note != "" {
					t.Fatalf("the model did not get the list whole, once (%d results): %.500q", len(got), got)
				}
				return
			}
			checkParts(t, partsAgent{"Gemini CLI", 36_000}, whole, book, got)
			if s := out.Stats.Tools.ByName["mcp_tairseach_tairseach_result_part"]; s.Count != 1 || s.Success != 1 || out.Stats.Tools.TotalFail != 0 {
				t.Errorf("Gemini CLI's count of the calls: %+v", out.Stats.Tools)
			}
		})
	}
}

// TestGeminiCLIArrayResult runs Gemini CLI with the bridge against a tool
// whose backend answers a top-level JSON array, as 1Password's
// op.vaults.list does: Gemini CLI 0.61 makes such a text structuredContent,
// which its MCP SDK refuses as not an object, unless structuredContent is
// already there. The model gets the array, as the backend answered it.
func TestGeminiCLIArrayResult(t *testing.T) {
	bin := geminiCLI(t)
	const vaults = "mcp_tairseach_tairseach_op_vaults_list"
	e := realShapesEnv(t)
	model := &fakeModel{wishes: []geminiWish{{vaults, map[string]any{}}}}
	api := httptest.NewServer(model)
	defer api.Close()

	out := runGemini(t, bin, geminiHome(t, e.args("--log-level", "warn")), api.URL, "Which 1Password vaults do I have?")
	_, responses, _ := model.session()
	if len(responses) != 1 {
		t.Fatalf("the model got %d tool results, want 1: %.2000q", len(responses), responses)
	}
	const want = `[{"id":"v-private","name":"Private"},{"id":"v-shared","name":"Shared"}]`
	if blocks := geminiBlocks(t, responses[0]); len(blocks) != 1 || blocks[0] != want {
		t.Errorf("op.vaults.list's array as the model got it: %q, want %q", blocks, want)
	}
	if s := out.Stats.Tools.ByName[vaults]; s.Success != 1 || out.Stats.Tools.TotalFail != 0 {
		t.Errorf("Gemini CLI's count of the call: %+v", out.Stats.Tools)
	}
}
