package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// generate writes files manifests of perFile tools each into dir, in the
// shape of the real corpus: indented JSON, descriptions of a sentence or two,
// input schemas of two to six typed and described properties (defaults,
// bounds, enums, arrays, a required list, additionalProperties false), an
// output schema and annotations. Every tool maps to demo.echo.
func generate(dir string, files, perFile int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	verbs := []string{"list", "get", "search", "create", "update", "delete", "export", "sync", "status", "archive"}
	nouns := []string{"items", "events", "messages", "records", "notes", "tasks", "files", "accounts", "projects", "labels"}
	for f := range files {
		id := fmt.Sprintf("svc%03d", f)
		var tools []map[string]any
		methods := map[string]string{}
		for t := range perFile {
			verb, noun := verbs[t%len(verbs)], nouns[(f+t)%len(nouns)]
			name := fmt.Sprintf("%s.%s_%s", id, noun, verb)
			tools = append(tools, map[string]any{
				"name": name,
				"description": fmt.Sprintf("%s %s in the %s service. Returns at most limit entries; use cursor to page. "+
					"Requires the %s permission and a connected account.", titleCase(verb), noun, id, noun),
				"inputSchema":  inputSchema(f, t, noun),
				"outputSchema": outputSchema(noun),
				"annotations": map[string]any{
					"readOnlyHint":    verb == "list" || verb == "get" || verb == "search" || verb == "status",
					"destructiveHint": verb == "delete" || verb == "archive",
					"openWorldHint":   f%3 == 0,
				},
			})
			methods[name] = "demo.echo"
		}
		m := map[string]any{
			"manifest_version": "1.0.0",
			"id":               id,
			"name":             "Service " + id[3:],
			"description":      "Generated manifest for benchmarks: ten tools with schemas shaped like the Tairseach corpus.",
			"version":          "1.0.0",
			"category":         "productivity",
			// A real permission, as the corpus's manifests name theirs.
			"requires":       map[string]any{"permissions": []any{map[string]any{"name": "contacts"}}},
			"tools":          tools,
			"implementation": map[string]any{"type": "internal", "module": "proxy.handlers." + id, "methods": methods},
		}
		b, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, id+".json"), append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func inputSchema(f, t int, noun string) map[string]any {
	props := map[string]any{
		"account": map[string]any{"type": "string", "description": "Account name (default: 'default')", "default": "default"},
		"limit":   map[string]any{"type": "integer", "minimum": 1, "maximum": 500, "default": 50, "description": "Maximum number of " + noun + " to return."},
	}
	var required []string
	n := 1 + (f+t)%5 // 2 to 6 properties
	if n > 1 {
		props["cursor"] = map[string]any{"type": "string", "description": "Opaque cursor from a previous call's nextCursor."}
	}
	if n > 2 {
		props["query"] = map[string]any{"type": "string", "minLength": 1, "description": "Text to search for in " + noun + "."}
		required = append(required, "query")
	}
	if n > 3 {
		props["ids"] = map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "maxItems": 100, "description": "Only these " + noun + "."}
	}
	if n > 4 {
		props["sort"] = map[string]any{"type": "string", "enum": []string{"created", "updated", "name"}, "default": "updated", "description": "Sort order."}
		props["include_archived"] = map[string]any{"type": "boolean", "default": false, "description": "Include archived " + noun + "."}
	}
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func outputSchema(noun string) map[string]any {
	return map[string]any{
		"type":     "object",
		"required": []string{noun},
		"properties": map[string]any{
			noun: map[string]any{"type": "array", "items": map[string]any{
				"type":     "object",
				"required": []string{"id"},
				"properties": map[string]any{
					"id":      map[string]any{"type": "string"},
					"name":    map[string]any{"type": "string"},
					"updated": map[string]any{"type": "string", "format": "date-time"},
				},
			}},
			"nextCursor": map[string]any{"type": "string"},
		},
		"additionalProperties": true,
	}
}

func titleCase(s string) string {
	if s == "" {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
