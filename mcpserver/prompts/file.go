package prompts

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"

	"go.yaml.in/yaml/v3"

	"github.com/geilt/tairseach-mcp/internal/quote"
	"github.com/geilt/tairseach-mcp/manifest"
)

// MaxFileSize is the largest prompt file read.
const MaxFileSize = 256 << 10

// Prompt is one prompt, from a file or a manifest.
type Prompt struct {
	Name        string
	Title       string
	Description string
	Arguments   []manifest.PromptArgument
	Template    string
	// Source is the file it came from: a path, or a manifest's relative path.
	Source string
	// Manifest is the manifest file of a manifest's prompt, "" for a file.
	Manifest string
	Socket   string
}

// frontMatter is the YAML head of a prompt file.
type frontMatter struct {
	Title       string                    `yaml:"title"`
	Description string                    `yaml:"description"`
	Arguments   []manifest.PromptArgument `yaml:"arguments"`
}

var placeholder = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_-]*)\s*\}\}`)

// ParseFile parses a prompt file: optional YAML front matter between
// "---" lines, then the body, whose {{argument}} placeholders are filled
// in by Render. name is the file's name without ".md".
func ParseFile(name string, data []byte) (*Prompt, error) {
	if !manifest.ValidPromptName(name) {
		return nil, fmt.Errorf("%s is not a prompt name: use letters, digits, '_', '-' and '.'", quote.Line(name, quote.Text))
	}
	data = bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))
	body := string(data)
	var fm frontMatter
	if rest, ok := strings.CutPrefix(strings.ReplaceAll(body, "\r\n", "\n"), "---\n"); ok {
		head, tail, found := strings.Cut(rest, "\n---")
		if !found {
			return nil, errors.New(`front matter has no closing "---" line`)
		}
		dec := yaml.NewDecoder(strings.NewReader(head))
		dec.KnownFields(true)
		if err := dec.Decode(&fm); err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("front matter: %w", err)
		}
		_, tail, _ = strings.Cut(tail, "\n")
		body = tail
	}
	p := &Prompt{Name: name, Title: fm.Title, Description: fm.Description, Arguments: fm.Arguments, Template: strings.TrimLeft(body, "\n")}
	if err := p.check(); err != nil {
		return nil, err
	}
	return p, nil
}

// check reports a prompt that cannot be served.
func (p *Prompt) check() error {
	if strings.TrimSpace(p.Template) == "" {
		return errors.New("the prompt's text is empty")
	}
	seen := map[string]bool{}
	for _, a := range p.Arguments {
		switch {
		case a.Name == "":
			return errors.New("an argument has no name")
		case seen[a.Name]:
			return fmt.Errorf("argument %s is declared twice", quote.IdentLine(a.Name, quote.Name))
		}
		seen[a.Name] = true
	}
	for _, m := range placeholder.FindAllStringSubmatch(p.Template, -1) {
		if !seen[m[1]] {
			return fmt.Errorf("{{%s}} is not a declared argument", m[1])
		}
	}
	return nil
}

// Render fills the placeholders from args, or says which argument is
// missing or unknown, or not one of its enum.
func (p *Prompt) Render(args map[string]string) (string, error) {
	for k := range args {
		if !slices.ContainsFunc(p.Arguments, func(a manifest.PromptArgument) bool { return a.Name == k }) {
			return "", fmt.Errorf("unknown argument %s for prompt %s", quote.IdentLine(k, quote.Name), p.Name)
		}
	}
	for _, a := range p.Arguments {
		v, ok := args[a.Name]
		if a.Required && (!ok || v == "") {
			return "", fmt.Errorf("missing required argument %s for prompt %s", quote.IdentLine(a.Name, quote.Name), p.Name)
		}
		if ok && len(a.Enum) > 0 && !slices.Contains(a.Enum, v) {
			return "", fmt.Errorf("argument %s of prompt %s must be one of %s", quote.IdentLine(a.Name, quote.Name), p.Name, strings.Join(a.Enum, ", "))
		}
	}
	return placeholder.ReplaceAllStringFunc(p.Template, func(m string) string {
		return args[placeholder.FindStringSubmatch(m)[1]]
	}), nil
}

// Size is the length of the text Render makes of args (each placeholder
// replaced by its argument), found without making it: a short template
// with many placeholders and a long argument would make a text that many
// times the argument.
func (p *Prompt) Size(args map[string]string) int {
	n := len(p.Template)
	for _, m := range placeholder.FindAllStringSubmatchIndex(p.Template, -1) {
		n += len(args[p.Template[m[2]:m[3]]]) - (m[1] - m[0])
	}
	return n
}

// LoadDir reads the prompt files (NAME.md) of dir. A broken file is left
// out and reported in errs; a missing dir has none.
func LoadDir(dir string) (prompts []*Prompt, errs []error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
		return nil, errs
	}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".md")
		if !ok || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if len(prompts) == MaxFiles {
			errs = append(errs, fmt.Errorf("%s: more than %d prompt files; the rest, from %s on, are left out", dir, MaxFiles, e.Name()))
			break
		}
		path := filepath.Join(dir, e.Name())
		if !e.Type().IsRegular() {
			errs = append(errs, fmt.Errorf("%s: not a regular file", path))
			continue
		}
		p, err := readFile(path, name)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", path, err))
			continue
		}
		prompts = append(prompts, p)
	}
	return prompts, errs
}

// MaxFiles is the most prompt files a directory gives: prompts/list is one
// message, and the directory is read again at every change.
const MaxFiles = 256

func readFile(path, name string) (*Prompt, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	if fi.Size() > MaxFileSize {
		return nil, fmt.Errorf("%d bytes, over the limit of %d", fi.Size(), MaxFileSize)
	}
	data := make([]byte, fi.Size())
	if _, err := f.ReadAt(data, 0); err != nil {
		return nil, err
	}
	p, err := ParseFile(name, data)
	if err != nil {
		return nil, err
	}
	p.Source = path
	return p, nil
}
