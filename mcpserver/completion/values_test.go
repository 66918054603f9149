package completion

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// replyOf is a reply of n values: objects with an id, or strings, every
// tenth a duplicate of the one before.
func replyOf(n int, objects bool) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"count":1,"items":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		v := i
		if i%10 == 9 {
			v = i - 1
		}
		if objects {
			fmt.Fprintf(&b, `{"id":"c-%d","name":"Contact %d","email":"c%d@example.com"}`, v, v, v)
		} else {
			fmt.Fprintf(&b, `"value-%d"`, v)
		}
	}
	b.WriteString(`]}`)
	return json.RawMessage(b.String())
}

// BenchmarkValues takes the values of a completion's reply that holds many:
// a contacts list is a few thousand; these are 10 to 100 times that, the
// second as large as the default --max-result-bytes lets a reply be. It was
// quadratic (a linear search per value): 54 s for the first. Measured
// without the budget, which a loaded machine could make it hit.
func BenchmarkValues(b *testing.B) {
	for _, c := range []struct {
		name    string
		n       int
		objects bool
	}{{"objects=100k", 100_000, true}, {"strings=500k", 500_000, false}} {
		reply := replyOf(c.n, c.objects)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(reply)))
			for b.Loop() {
				if got, _ := values(context.Background(), reply); len(got) != c.n-c.n/10 {
					b.Fatalf("%d values, want %d", len(got), c.n-c.n/10)
				}
			}
		})
	}
}
