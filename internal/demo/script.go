package demo

import (
	"context"
	"strings"
	"unicode/utf8"
)

// The real server serves the tools of script and proxy manifests under their
// tool name rather than a dotted method; the demo answers the tool of
// manifests.example/wordcount.json the same way.

type wordCountParams struct {
	Text *string `json:"text"`
}

type wordCountResult struct {
	Words      int `json:"words"`
	Lines      int `json:"lines"`
	Characters int `json:"characters"`
}

// wordCount serves the script tool word_count: it counts the words, lines
// and characters of params.text.
func wordCount(_ context.Context, params []byte) ([]byte, *rpcError) {
	var p wordCountParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.Text == nil {
		return nil, invalidParams("missing text")
	}
	text := *p.Text
	r := wordCountResult{Words: len(strings.Fields(text)), Characters: utf8.RuneCountInString(text)}
	if text != "" {
		r.Lines = strings.Count(text, "\n") + 1
		if strings.HasSuffix(text, "\n") {
			r.Lines--
		}
	}
	return marshalResult(r)
}
