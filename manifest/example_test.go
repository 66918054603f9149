package manifest_test

import (
	"fmt"

	"github.com/geilt/tairseach-mcp/manifest"
)

func ExampleLoad() {
	r, err := manifest.Load("testdata/example", manifest.Options{Prefix: "tairseach_"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range r.Tools {
		fmt.Printf("%s -> %s (%s) %s\n", t.Name, t.Method, t.File, t.InputSchema)
	}
	for _, s := range r.Skipped {
		fmt.Printf("skipped %s: %v\n", s.ToolName, s.Reason)
	}
	for _, p := range r.Problems {
		fmt.Println(p.Severity, p.Tool)
	}
	// Output:
	// tairseach_weather_now -> weather.now (core/weather.json) {"type":"object","properties":{"city":{"type":"string"}}}
	// skipped weather.admin: hidden by mcp_expose
	// skipped weather.forecast: invalid input schema
	// skipped weather_now: duplicate name
	// error weather.forecast
}

func ExampleParseFile() {
	data := []byte(`{
		"id": "contacts",
		"tools": [{"name": "contacts.list", "annotations": {"readOnlyHint": true}}],
		"implementation": {"methods": {"contacts.list": "contacts.list"}}
	}`)
	f, err := manifest.ParseFile("core/contacts.json", data, manifest.Options{Prefix: "tairseach_"})
	if err != nil {
		fmt.Println(err)
		return
	}
	t := f.Tools[0]
	fmt.Println(t.Name, t.Method, *t.Annotations.ReadOnlyHint, string(t.InputSchema))

	_, err = manifest.ParseFile("core/bad.json", []byte("{\n  \"tools\": {}\n}"), manifest.Options{})
	fmt.Println(err)
	// Output:
	// tairseach_contacts_list contacts.list true {"type":"object"}
	// core/bad.json:2:12: tools: got object, want array
}
