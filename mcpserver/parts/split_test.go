package parts

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/geilt/tairseach-mcp/internal/jsonscan"
)

// contacts is an address book as contacts.list answers it whole.
func contacts(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"contacts":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"c%d","name":"Person %d","emails":["p%d@example.com"],"note":"%s"}`, i, i, i, strings.Repeat("n", i%200))
	}
	fmt.Fprintf(&b, `],"count":%d}`, n)
	return b.Bytes()
}

// checkParts holds the rules every split keeps: each part within the
// budget and, unless cut, valid JSON.
func checkParts(t *testing.T, ps []Part, budget int) {
	t.Helper()
	if len(ps) < 2 {
		t.Fatalf("%d parts, want several", len(ps))
	}
	for i, p := range ps {
		if len(p.Text) > budget {
			t.Errorf("part %d is %d bytes, over the budget of %d", i+1, len(p.Text), budget)
		}
		if !p.Cut && !jsonscan.Valid(p.Text) {
			t.Errorf("part %d is not valid JSON: %.200s", i+1, p.Text)
		}
	}
}

func TestSplitKeepsWholeItemsOfTheListThatHoldsTheResult(t *testing.T) {
	const budget = 10_000
	text := contacts(2000)
	ps := Split(text, budget)
	checkParts(t, ps, budget)
	var all []json.RawMessage
	for i, p := range ps {
		var part struct {
			Contacts []json.RawMessage `json:"contacts"`
			Count    int               `json:"count"`
		}
		if err := json.Unmarshal(p.Text, &part); err != nil {
			t.Fatal(err)
		}
		if part.Count != 2000 || p.Path != ".contacts" || p.Unit != "items" || p.Of != 2000 {
			t.Fatalf("part %d: count %d, %s of %s at %s, want the frame kept and items of .contacts", i+1, part.Count, p.Unit, Count(p.Of), p.Path)
		}
		if p.From != len(all)+1 || p.To != len(all)+len(part.Contacts) {
			t.Fatalf("part %d says items %d–%d, holds %d–%d", i+1, p.From, p.To, len(all)+1, len(all)+len(part.Contacts))
		}
		all = append(all, part.Contacts...)
	}
	var whole struct{ Contacts []json.RawMessage }
	json.Unmarshal(text, &whole)
	if len(all) != len(whole.Contacts) {
		t.Fatalf("parts hold %d items, the whole %d", len(all), len(whole.Contacts))
	}
	for i := range all {
		if !bytes.Equal(all[i], whole.Contacts[i]) {
			t.Fatalf("item %d changed: %s, want %s", i, all[i], whole.Contacts[i])
		}
	}
	if got := ps[0].What(); !strings.HasPrefix(got, "items 1–") || !strings.HasSuffix(got, " of 2,000 of the array at .contacts") {
		t.Errorf("What = %q", got)
	}
}

func TestSplitTopLevelArray(t *testing.T) {
	var items []string
	for i := range 500 {
		items = append(items, fmt.Sprintf(`{"vault":"v%d","title":"Item %d"}`, i, i))
	}
	text := []byte("[" + strings.Join(items, ",") + "]")
	ps := Split(text, 2000)
	checkParts(t, ps, 2000)
	var got []string
	for _, p := range ps {
		var part []json.RawMessage
		if err := json.Unmarshal(p.Text, &part); err != nil {
			t.Fatal(err)
		}
		for _, it := range part {
			got = append(got, string(it))
		}
	}
	if strings.Join(got, ",") != strings.Join(items, ",") {
		t.Fatal("the parts' items are not the whole's, in order")
	}
	if ps[0].What() != fmt.Sprintf("items 1–%d of 500 of the top-level array", ps[0].To) {
		t.Errorf("What = %q", ps[0].What())
	}
}

func TestSplitStringByLines(t *testing.T) {
	var doc strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&doc, "line %d of a document with \"quotes\" and <tags> — ünïcode\n", i)
	}
	doc.WriteString(strings.Repeat("a very long last line ✓", 2000)) // longer than a part
	text, _ := json.Marshal(map[string]any{"path": "/tmp/doc.txt", "content": doc.String()})
	const budget = 8000
	ps := Split(text, budget)
	checkParts(t, ps, budget)
	var joined strings.Builder
	for i, p := range ps {
		var part struct{ Path, Content string }
		if err := json.Unmarshal(p.Text, &part); err != nil {
			t.Fatal(err)
		}
		if part.Path != "/tmp/doc.txt" || p.Unit != "lines" || p.Path != ".content" {
			t.Fatalf("part %d: %+v at %s", i+1, p.Unit, p.Path)
		}
		if i < len(ps)-1 && !strings.HasSuffix(part.Content, "\n") && p.From != p.To {
			t.Errorf("part %d does not end at a line's end", i+1)
		}
		joined.WriteString(part.Content)
	}
	if joined.String() != doc.String() {
		t.Fatal("the parts' lines are not the whole's")
	}
}

func TestSplitAnItemLargerThanAPart(t *testing.T) {
	text := []byte(`[{"id":1},{"id":2,"body":"` + strings.Repeat(`x\n`, 5000) + `"},{"id":3}]`)
	ps := Split(text, 1000)
	checkParts(t, ps, 1000)
	for _, p := range ps[1 : len(ps)-1] {
		if p.Path != ".[1].body" {
			t.Fatalf("a part of the large item is at %s, want .[1].body", p.Path)
		}
	}
}

func TestSplitNotJSONByLines(t *testing.T) {
	text := []byte(strings.Repeat("plain text line\n", 1000))
	ps := Split(text, 1000)
	var joined []byte
	for _, p := range ps {
		if len(p.Text) > 1000 || !bytes.HasSuffix(p.Text, []byte("\n")) {
			t.Fatalf("part of %d bytes ends %q", len(p.Text), p.Text[max(0, len(p.Text)-5):])
		}
		joined = append(joined, p.Text...)
	}
	if !bytes.Equal(joined, text) {
		t.Fatal("lost text")
	}
}

func TestSplitDeepNestingFallsBackToText(t *testing.T) {
	text := []byte(strings.Repeat("[", 5000) + strings.Repeat("]", 5000))
	ps := Split(text, 1000)
	var joined []byte
	for _, p := range ps {
		if len(p.Text) > 1000 {
			t.Fatalf("part of %d bytes", len(p.Text))
		}
		joined = append(joined, p.Text...)
	}
	if !bytes.Equal(joined, text) {
		t.Fatal("lost text")
	}
}

func FuzzSplit(f *testing.F) {
	f.Add([]byte(`{"a":[1,2,3,{"b":"c\nd"}],"e":"f"}`), 300)
	f.Add(contacts(40), 500)
	f.Add([]byte(`"`+strings.Repeat("é\n", 400)+`"`), 256)
	f.Fuzz(func(t *testing.T, text []byte, budget int) {
		budget = 256 + abs(budget)%4096
		ps := Split(text, budget)
		if len(text) > 0 && len(ps) == 0 {
			t.Fatal("no parts")
		}
		for i, p := range ps {
			if len(p.Text) > budget {
				t.Fatalf("part %d: %d bytes over %d", i, len(p.Text), budget)
			}
			if !p.Cut && jsonscan.Valid(text) && !jsonscan.Valid(p.Text) {
				t.Fatalf("part %d of valid JSON is not: %q", i, p.Text)
			}
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
