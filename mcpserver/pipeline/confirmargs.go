package pipeline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/geilt/tairseach-mcp/internal/quote"
)

// Bounds of the arguments shown in a confirmation. The model chooses every
// argument, so the question must show what an accept sends: every
// argument's name, and the start of every value, with the cut marked; a
// long value never pushes a later argument out of sight.
const (
	// MaxConfirmArgs bounds the arguments' part of the question, in bytes.
	MaxConfirmArgs = 4000
	// maxConfirmKey bounds an argument's name, quoted: a longer top-level
	// name cannot be shown whole, and the call is not offered.
	maxConfirmKey = 200
	// minConfirmValue is the least of each value shown before the depth
	// of what is shown is reduced, and at the top level before the call
	// is not offered; maxConfirmValue the most, so that one value does
	// not fill the question.
	minConfirmValue = 40
	maxConfirmValue = 1000
	// maxConfirmDepth bounds the levels of nesting shown; deeper values
	// are summed up (how many members, how many bytes).
	maxConfirmDepth = 8
)

// argNode is one value of the arguments, in the order sent (duplicate
// names included, though the argument check refuses those).
type argNode struct {
	key   string // the member's name, when keyed
	keyed bool
	kind  byte // '{', '[', '"' (a string) or 0 (a number, true, false, null)
	text  string
	kids  []*argNode
	size  int64 // the bytes of the value as sent
	depth int   // the levels of containers below it, 0 for a scalar
}

// parseArgs reads args into argNodes. Arguments that are not JSON (which
// the argument check refuses before) give an error.
func parseArgs(args json.RawMessage) (*argNode, error) {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	n, err := parseValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("data after the arguments")
	}
	return n, nil
}

func parseValue(dec *json.Decoder) (*argNode, error) {
	start := dec.InputOffset()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	n := &argNode{}
	switch v := tok.(type) {
	case json.Delim:
		n.kind = byte(v)
		for dec.More() {
			var key string
			if n.kind == '{' {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ = k.(string)
			}
			kid, err := parseValue(dec)
			if err != nil {
				return nil, err
			}
			kid.key, kid.keyed = key, n.kind == '{'
			n.kids = append(n.kids, kid)
			n.depth = max(n.depth, kid.depth+1)
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
	case string:
		n.kind, n.text = '"', v
	case json.Number:
		n.text = v.String()
	case bool:
		n.text = strconv.FormatBool(v)
	case nil:
		n.text = "null"
	}
	n.size = dec.InputOffset() - start
	return n, nil
}

// showArgs writes the arguments for the question: one line per member,
// indented by level; each string (and number) is shown up to the same
// number of bytes, as large as the bound allows, and cut with its mark;
// when even the start of each does not fit, levels below the top are summed
// up instead, deepest first. It returns why not, when even the names of
// the top-level arguments with the start of each value do not fit.
func showArgs(root *argNode) (text string, cut bool, why string) {
	if root.kind == '{' {
		for _, k := range root.kids {
			if _, left := quote.Ident(k.key, maxConfirmKey); left > 0 {
				return "", false, fmt.Sprintf("the argument name %s is over %d bytes long, quoted", quote.Line(k.key, quote.Name), maxConfirmKey)
			}
		}
	}
	for depth := max(1, min(root.depth, maxConfirmDepth)); depth >= 1; depth-- {
		if _, _, ok := renderArgs(root, depth, minConfirmValue); !ok {
			continue
		}
		// The largest share each value may have that fits.
		lo, hi := minConfirmValue, maxConfirmValue
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if _, _, ok := renderArgs(root, depth, mid); ok {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		text, cut, _ = renderArgs(root, depth, lo)
		return text, cut, ""
	}
	if root.kind != '{' {
		return "", false, fmt.Sprintf("the arguments make more than %d bytes even with each value cut", MaxConfirmArgs)
	}
	return "", false, fmt.Sprintf("%d arguments make more than %d bytes even with each value cut to its first %d", len(root.kids), MaxConfirmArgs, minConfirmValue)
}

// renderArgs shows root down to depth levels of containers (the
// arguments' object is the first), each string and number cut to share
// bytes; cut says whether anything was cut or summed up; ok is false as
// soon as the text passes MaxConfirmArgs.
func renderArgs(root *argNode, depth, share int) (text string, cut, ok bool) {
	w := &argWriter{share: share}
	switch {
	case root.kind == '{':
		for _, k := range root.kids {
			w.node(k, 1, depth-2)
		}
	default:
		w.node(root, 1, depth-1)
	}
	return w.b.String(), w.cut, !w.over
}

// argWriter writes the lines of renderArgs.
type argWriter struct {
	b     strings.Builder
	share int
	cut   bool // something was cut or summed up
	over  bool // the text passed MaxConfirmArgs
}

func (w *argWriter) line(indent int, s string) {
	if w.over {
		return
	}
	if w.b.Len()+2*indent+len(s)+1 > MaxConfirmArgs {
		w.over = true
		return
	}
	w.b.WriteString(strings.Repeat("  ", indent))
	w.b.WriteString(s)
	w.b.WriteByte('\n')
}

// node writes n at indent, its containers expanded for levels more.
func (w *argWriter) node(n *argNode, indent, levels int) {
	if w.over {
		return
	}
	head := ""
	if n.keyed {
		key, left := quote.Ident(n.key, maxConfirmKey)
		w.cut = w.cut || left > 0
		head = key + ": "
	}
	switch {
	case n.kind == '"':
		v, left := quote.Cut(n.text, w.share)
		w.cut = w.cut || left > 0
		w.line(indent, head+v)
	case n.kind == 0:
		v := n.text
		if len(v) > w.share {
			v = v[:w.share] + quote.More(len(v)-w.share)
			w.cut = true
		}
		w.line(indent, head+v)
	case len(n.kids) == 0:
		w.line(indent, head+string(n.kind)+closing(n.kind))
	case levels < 0:
		w.cut = true
		what := plural(len(n.kids), "member")
		if n.kind == '[' {
			what = plural(len(n.kids), "item")
		}
		w.line(indent, fmt.Sprintf("%s%c…%s (%s, %d bytes, not shown)", head, n.kind, closing(n.kind), what, n.size))
	default:
		w.line(indent, head+string(n.kind))
		for _, k := range n.kids {
			w.node(k, indent+1, levels-1)
		}
		w.line(indent, closing(n.kind))
	}
}

func closing(open byte) string {
	if open == '{' {
		return "}"
	}
	return "]"
}

// plural is "1 item", "2 items".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}
