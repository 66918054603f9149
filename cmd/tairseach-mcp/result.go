package main

// What an isError result of a tool says, in one line: the backend's error
// it carries, or the first line of its text. call and doctor print it.

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/internal/quote"
)

// backendError is the text of an isError result that carries the
// backend's JSON-RPC error.
type backendError struct {
	Error *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
		// Data may hold a remediation, what the Tairseach server says to
		// do about a refusal (the permission to grant).
		Data json.RawMessage `json:"data"`
	} `json:"error"`
}

func resultText(res *mcp.CallToolResult) string {
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	return text.String()
}

// isBackendError reports whether res is an error the backend answered,
// rather than a failure to reach it.
func isBackendError(res *mcp.CallToolResult) bool {
	var body backendError
	return json.Unmarshal([]byte(resultText(res)), &body) == nil && body.Error != nil
}

// errorSummary is one line about an isError result: the backend's code and
// message, or the first line of the text.
func errorSummary(res *mcp.CallToolResult) string {
	text := resultText(res)
	var body backendError
	if json.Unmarshal([]byte(text), &body) == nil && body.Error != nil {
		// The server's words, quoted on one line.
		summary := fmt.Sprintf("the server answered error %d: %s", body.Error.Code, quote.Line(body.Error.Message, quote.Text))
		var data struct{ Remediation string }
		if json.Unmarshal(body.Error.Data, &data) == nil && data.Remediation != "" {
			summary += "; " + quote.Line(data.Remediation, quote.Text)
		}
		return summary
	}
	line, rest, _ := strings.Cut(strings.TrimSpace(text), "\n")
	switch short := shorten(line, 500); {
	case line == "":
		return "the tool returned an error without text"
	case short != line || rest != "":
		return short + " (--raw shows the whole result)"
	}
	return line
}

// shorten cuts a one-line message to about most characters at a space,
// never inside a word.
func shorten(s string, most int) string {
	r := []rune(s)
	if len(r) <= most {
		return s
	}
	cut := string(r[:most])
	if i := strings.LastIndexByte(cut, ' '); i > most/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:") + " …"
}
