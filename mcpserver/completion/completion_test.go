package completion_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/geilt/tairseach-mcp/mcpserver/backend"
	"github.com/geilt/tairseach-mcp/mcpserver/completion"
)

func TestEnum(t *testing.T) {
	if got := completion.Enum([]string{"email", "Phone", "any"}, "p"); strings.Join(got, ",") != "Phone" {
		t.Fatalf("got %v", got)
	}
}

func TestFromMethod(t *testing.T) {
	reply := func(s string) callerFunc {
		return func(context.Context, *backend.Request) (json.RawMessage, error) {
			return json.RawMessage(s), nil
		}
	}
	tests := []struct {
		name string
		call callerFunc
		want string
	}{
		{"strings", reply(`["a","b","a"]`), "a,b"},
		{"objects", reply(`[{"id":"c-1"},{"name":"Ada"},{"title":"T"},{"x":1}]`), "c-1,Ada,T"},
		{"wrapped", reply(`{"count":2,"contacts":[{"id":"c-1"},{"id":"c-2"}]}`), "c-1,c-2"},
		{"scalar", reply(`42`), ""},
		{"failing", func(context.Context, *backend.Request) (json.RawMessage, error) {
			return nil, errors.New("down")
		}, ""},
		{"refused", func(context.Context, *backend.Request) (json.RawMessage, error) {
			return nil, &backend.Refused{Rule: backend.RuleHidden, Message: "refused"}
		}, ""},
		{"slow", func(ctx context.Context, _ *backend.Request) (json.RawMessage, error) {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(5 * time.Second):
				return json.RawMessage(`["late"]`), nil
			}
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			got := completion.FromMethod(context.Background(), tt.call, backend.Request{Method: "m"}, "a")
			if strings.Join(got, ",") != tt.want {
				t.Fatalf("got %v, want %s", got, tt.want)
			}
			if d := time.Since(start); d > completion.Timeout+500*time.Millisecond {
				t.Fatalf("took %s", d)
			}
		})
	}
}

// A completion asks the pipeline for a request of its kind, with the text
// typed so far as the query.
func TestFromMethodRequest(t *testing.T) {
	var got *backend.Request
	caller := callerFunc(func(_ context.Context, r *backend.Request) (json.RawMessage, error) {
		got = r
		return json.RawMessage(`["x"]`), nil
	})
	completion.FromMethod(context.Background(), caller, backend.Request{Target: "ref/prompt p a", Method: "contacts.search", Manifest: "c.json"}, "ad")
	if got == nil || got.Kind != backend.Completion || got.Method != "contacts.search" || got.Manifest != "c.json" || string(got.Params) != `{"query":"ad"}` {
		t.Fatalf("request %+v", got)
	}
}

// callerFunc stands in for the server's pipeline.
type callerFunc func(context.Context, *backend.Request) (json.RawMessage, error)

func (f callerFunc) Do(ctx context.Context, r *backend.Request) (json.RawMessage, error) {
	return f(ctx, r)
}

func TestResultCut(t *testing.T) {
	var vals []string
	for i := range 150 {
		vals = append(vals, fmt.Sprint(i))
	}
	r := completion.Result(vals)
	if len(r.Completion.Values) != completion.MaxValues || !r.Completion.HasMore || r.Completion.Total != 150 {
		t.Fatalf("%+v", r.Completion)
	}
	if r := completion.Result(nil); r.Completion.Values == nil {
		t.Fatal("null values")
	}
}

// The budget holds for the reply's values too: a reply that arrives as the
// budget ends is not worked through after it.
func TestFromMethodBudgetCoversTheReply(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"items":[`)
	for i := range 200_000 {
		fmt.Fprintf(&b, `"value-%d",`, i)
	}
	reply := json.RawMessage(strings.TrimSuffix(b.String(), ",") + "]}")
	caller := callerFunc(func(ctx context.Context, _ *backend.Request) (json.RawMessage, error) {
		<-ctx.Done() // the reply comes just as the budget ends
		return reply, nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if got := completion.FromMethod(ctx, caller, backend.Request{Method: "m"}, ""); got != nil {
		t.Fatalf("%d values from a reply that came after the budget, want none", len(got))
	}
}
