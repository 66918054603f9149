package manifest

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/geilt/tairseach-mcp/internal/quote"
)

type resourceJSON struct {
	URI         string              `json:"uri"`
	URITemplate string              `json:"uriTemplate"`
	Name        string              `json:"name"`
	Title       string              `json:"title"`
	Description string              `json:"description"`
	MIMEType    string              `json:"mimeType"`
	Method      string              `json:"method"`
	Complete    map[string]string   `json:"complete"`
	Enum        map[string][]string `json:"enum"`
}

type promptJSON struct {
	Name        string           `json:"name"`
	Title       string           `json:"title"`
	Description string           `json:"description"`
	Arguments   []PromptArgument `json:"arguments"`
	Template    string           `json:"template"`
}

// templateVar matches one {expression} of a URI template.
var templateVar = regexp.MustCompile(`\{([^{}]*)\}`)

// varName is what a level-1 template variable may be called.
var varName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// TemplateVars returns the variables of a level-1 URI template, or an error
// saying why it is not one.
func TemplateVars(tmpl string) ([]string, error) {
	if strings.Count(tmpl, "{") != strings.Count(tmpl, "}") {
		return nil, fmt.Errorf("unbalanced braces in %s", quote.Line(tmpl, quote.Text))
	}
	var vars []string
	for _, m := range templateVar.FindAllStringSubmatch(tmpl, -1) {
		if !varName.MatchString(m[1]) {
			return nil, fmt.Errorf("{%s}: only simple {name} variables are supported", m[1])
		}
		if slices.Contains(vars, m[1]) {
			return nil, fmt.Errorf("variable {%s} appears twice", m[1])
		}
		vars = append(vars, m[1])
	}
	if len(vars) == 0 {
		return nil, fmt.Errorf("uriTemplate %s has no {variable}; use \"uri\"", quote.Line(tmpl, quote.Text))
	}
	return vars, nil
}

// addDeclared parses the optional "resources" and "prompts" arrays; a bad
// entry is left out with an Error problem naming its position. methods are
// the manifest's socket methods, as manifestMethods returns them, and socket
// its implementation.socket.
func (f *File) addDeclared(data []byte, res []resourceJSON, prompts []promptJSON, methods map[string]bool, socket string) {
	where := func(key string, i int) string {
		if off, ok := valueOffset(data, key, i); ok {
			l, c := lineCol(data, off)
			return fmt.Sprintf("%s[%d] (%s:%d:%d)", key, i, f.Path, l, c)
		}
		return fmt.Sprintf("%s[%d]", key, i)
	}
	bad := func(key string, i int, format string, args ...any) {
		f.Problems = append(f.Problems, Problem{File: f.Path, Severity: Error,
			Message: where(key, i) + " is left out: " + fmt.Sprintf(format, args...)})
	}
	completes := func(key string, i int, meth string) bool {
		ro, ok := methods[meth]
		switch {
		case !ok:
			bad(key, i, "complete method %s is not one of this manifest's methods", quote.Line(meth, quote.Text))
		case !ro:
			bad(key, i, "complete method %s is not read-only (its tool needs annotations.readOnlyHint true)", quote.Line(meth, quote.Text))
		}
		return ok && ro
	}
	for i, r := range res {
		if (r.URI == "") == (r.URITemplate == "") {
			bad("resources", i, `set exactly one of "uri" and "uriTemplate"`)
			continue
		}
		if r.Name == "" {
			bad("resources", i, `no "name"`)
			continue
		}
		if _, ok := methods[r.Method]; !ok {
			bad("resources", i, "method %s is not one of this manifest's methods (implementation.methods)", quote.Line(r.Method, quote.Text))
			continue
		}
		u := r.URI + r.URITemplate
		if p, err := url.Parse(templateVar.ReplaceAllString(u, "x")); err != nil || p.Scheme == "" {
			bad("resources", i, "%s is not an absolute URI", quote.Line(u, quote.Text))
			continue
		}
		var vars []string
		if r.URITemplate != "" {
			var err error
			if vars, err = TemplateVars(r.URITemplate); err != nil {
				bad("resources", i, "%v", err)
				continue
			}
		}
		ok := true
		for v, meth := range r.Complete {
			if !slices.Contains(vars, v) {
				bad("resources", i, "complete names %s, which is not a variable of the template", quote.IdentLine(v, quote.Name))
				ok = false
			} else if !completes("resources", i, meth) {
				ok = false
			}
		}
		if !ok {
			continue
		}
		f.Resources = append(f.Resources, Resource{URI: r.URI, URITemplate: r.URITemplate, Name: r.Name, Title: r.Title,
			Description: r.Description, MIMEType: r.MIMEType, Method: r.Method, Complete: r.Complete, Enum: r.Enum,
			Socket: socket, File: f.Path, ManifestID: f.ID})
	}
	for i, p := range prompts {
		if !ValidName(p.Name) && !validPromptName(p.Name) {
			bad("prompts", i, "name %s must be letters, digits, '_', '-' or '.'", quote.IdentLine(p.Name, quote.Name))
			continue
		}
		if p.Template == "" {
			bad("prompts", i, `no "template"`)
			continue
		}
		ok := true
		for _, a := range p.Arguments {
			if a.Name == "" {
				bad("prompts", i, "an argument has no name")
				ok = false
			} else if a.Complete != "" && !completes("prompts", i, a.Complete) {
				ok = false
			}
		}
		if !ok {
			continue
		}
		f.Prompts = append(f.Prompts, Prompt{Name: p.Name, Title: p.Title, Description: p.Description,
			Arguments: p.Arguments, Template: p.Template, Socket: socket, File: f.Path, ManifestID: f.ID})
	}
}

var promptName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// validPromptName reports whether name can name a prompt.
func validPromptName(name string) bool { return promptName.MatchString(name) }

// ValidPromptName reports whether name can name a prompt: letters, digits,
// '_', '-' and '.', at most 64.
func ValidPromptName(name string) bool { return validPromptName(name) }

// declared is the part of a manifest with its declared resources and prompts.
type declared struct {
	Resources []resourceJSON `json:"resources"`
	Prompts   []promptJSON   `json:"prompts"`
}

// parseDeclared reads the optional arrays; a wrong type is an Error problem
// and leaves both out, as the tools still load. methods and socket are as
// addDeclared takes them.
func (f *File) parseDeclared(data []byte, methods map[string]bool, socket string) {
	var d declared
	if err := json.Unmarshal(data, &d); err != nil {
		f.Problems = append(f.Problems, Problem{File: f.Path, Severity: Error,
			Message: fmt.Sprintf("resources and prompts are left out: %v", err)})
		return
	}
	if len(d.Resources)+len(d.Prompts) > 0 {
		f.addDeclared(data, d.Resources, d.Prompts, methods, socket)
	}
}
