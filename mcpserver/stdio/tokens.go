package stdio

import (
	"bytes"
	"strconv"

	"github.com/geilt/tairseach-mcp/internal/jsonscan"
	"github.com/geilt/tairseach-mcp/mcpserver/internal/exact"
)

// privateToken begins the progress token the transport gives the go-sdk
// in place of a client's it would not write back as it came; the go-sdk's
// number for the request follows. As the go-sdk writes it: a NUL cannot be
// in a token a client wrote without escaping it.
const privateToken = `"\u0000progress:`

// exactToken returns the params of the request the go-sdk knows as n, with
// a progress token in meta (its _meta, within params) that the go-sdk
// would not write back byte for byte (exact.Token) replaced by a private
// one; the client's is kept on the request, for restoreToken.
func (c *conn) exactToken(n int64, params, meta []byte) []byte {
	if len(meta) == 0 || meta[0] != '{' || !bytes.Contains(meta, []byte(`progressToken`)) {
		return params
	}
	var tok []byte
	_ = jsonscan.Members(meta, func(key, value []byte) bool {
		if jsonscan.KeyIs(key, "progressToken") {
			tok = value // the last, as encoding/json keeps
		}
		return true
	})
	if tok == nil || exact.Token(tok) {
		return params
	}
	// tok is within params: where, from how much of the array is left.
	i := cap(params) - cap(tok)
	if i < 0 || i+len(tok) > len(params) || &params[i] != &tok[0] {
		return params
	}
	private := strconv.AppendInt([]byte(privateToken), n, 10)
	private = append(private, '"')
	out := make([]byte, 0, len(params)+len(private))
	out = append(append(append(out, params[:i]...), private...), params[i+len(tok):]...)
	c.mu.Lock()
	if r := c.reqs[n]; r != nil {
		r.token = bytes.Clone(tok)
	}
	c.mu.Unlock()
	return out
}

// restoreToken returns the params of a progress notification of the go-sdk
// with the client's own token in place of a private one.
func (c *conn) restoreToken(params []byte) []byte {
	i := bytes.Index(params, []byte(privateToken))
	if i < 0 {
		return params
	}
	j := i + len(privateToken)
	end := bytes.IndexByte(params[j:], '"')
	if end < 0 {
		return params
	}
	n, err := strconv.ParseInt(string(params[j:j+end]), 10, 64)
	if err != nil {
		return params
	}
	c.mu.Lock()
	var tok []byte
	if r := c.reqs[n]; r != nil {
		tok = r.token
	}
	c.mu.Unlock()
	if tok == nil {
		return params
	}
	out := make([]byte, 0, len(params)+len(tok))
	return append(append(append(out, params[:i]...), tok...), params[j+end+1:]...)
}
