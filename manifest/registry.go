package manifest

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Registry is the merged, sorted result of many manifest files.
// It is not modified after Build or Load and is safe for concurrent reads.
type Registry struct {
	// Tools is sorted by Name; names are unique.
	Tools []Tool
	// Skipped lists the tools not exposed, in file and tool order.
	Skipped []Skipped
	// Problems lists warnings and errors, in file order.
	Problems []Problem
	// Files lists the relative slash paths of the files that loaded, sorted.
	Files []string
	// FileErrors lists the files rejected as a whole, sorted by path.
	FileErrors []*FileError
	// Resources and Prompts are the ones manifests declare, in file order;
	// a URI or prompt name already taken is left out with a warning.
	Resources []Resource
	Prompts   []Prompt
	// IDs maps each manifest id to the file that first uses it.
	IDs map[string]string

	index  map[string]int      // Name -> index in Tools
	toolAt map[string]Position // Name -> where the tool is named in its file
}

// Position returns where the tool with the MCP name name is named in its
// file; the zero Position when unknown.
func (r *Registry) Position(name string) Position {
	if r == nil {
		return Position{}
	}
	return r.toolAt[name]
}

// Lookup returns the tool with the given MCP name.
func (r *Registry) Lookup(name string) (Tool, bool) {
	if r == nil {
		return Tool{}, false
	}
	if r.index != nil {
		i, ok := r.index[name]
		if !ok {
			return Tool{}, false
		}
		return r.Tools[i], true
	}
	// A Registry not made by Build: Tools is still documented as sorted.
	i, ok := slices.BinarySearchFunc(r.Tools, name, func(t Tool, n string) int { return strings.Compare(t.Name, n) })
	if !ok {
		return Tool{}, false
	}
	return r.Tools[i], true
}

// Build merges parsed files into a Registry. Files are taken in byte order of
// File.Path whatever order they are given in, and tools in file order; when
// two tools get the same MCP name the first wins and the other is Skipped as
// a Duplicate (same method and socket) or a Conflict (with a Warning).
// Nil files are ignored. Build does not log.
func Build(files []*File) *Registry {
	sorted := make([]*File, 0, len(files))
	for _, f := range files {
		if f != nil {
			sorted = append(sorted, f)
		}
	}
	slices.SortStableFunc(sorted, func(a, b *File) int { return strings.Compare(a.Path, b.Path) })

	r := &Registry{toolAt: map[string]Position{}}
	winners := make(map[string]Tool)
	idFiles := make(map[string]string) // manifest id -> first file using it
	resourceFiles := map[string]string{}
	promptFiles := map[string]string{}
	for _, f := range sorted {
		r.Files = append(r.Files, f.Path)
		r.Problems = append(r.Problems, f.Problems...)
		r.Skipped = append(r.Skipped, f.Skipped...)
		if f.ID != "" {
			if first, ok := idFiles[f.ID]; ok {
				r.Problems = append(r.Problems, Problem{
					File: f.Path, Severity: Warning, Position: f.idAt,
					Message: fmt.Sprintf("manifest id %q is also used by %s", f.ID, first),
				})
			} else {
				idFiles[f.ID] = f.Path
			}
		}
		for _, d := range f.Resources {
			u := d.URI + d.URITemplate
			if first, ok := resourceFiles[u]; ok {
				r.Problems = append(r.Problems, Problem{File: f.Path, Severity: Warning,
					Message: fmt.Sprintf("resource %s is left out: %s declares it already", u, first)})
				continue
			}
			resourceFiles[u] = f.Path
			r.Resources = append(r.Resources, d)
		}
		for _, p := range f.Prompts {
			if first, ok := promptFiles[p.Name]; ok {
				r.Problems = append(r.Problems, Problem{File: f.Path, Severity: Warning,
					Message: fmt.Sprintf("prompt %s is left out: %s declares it already", p.Name, first)})
				continue
			}
			promptFiles[p.Name] = f.Path
			r.Prompts = append(r.Prompts, p)
		}
		for i, t := range f.Tools {
			var named Position
			if i < len(f.toolAt) {
				named = f.toolAt[i]
			}
			w, taken := winners[t.Name]
			if !taken {
				winners[t.Name] = t
				r.toolAt[t.Name] = named
				continue
			}
			s := Skipped{Name: t.Name, ToolName: t.ToolName, File: t.File, Position: named}
			if t.Method == w.Method && t.Socket == w.Socket {
				s.Reason = Duplicate
				s.Detail = fmt.Sprintf("duplicate of %s (%s) in %s", w.Name, w.ToolName, w.File)
			} else {
				s.Reason = Conflict
				s.Detail = fmt.Sprintf("%s is already %s in %s, calling %s", t.Name, w.ToolName, w.File, describeMethod(w))
				r.Problems = append(r.Problems, Problem{
					File: t.File, Tool: t.ToolName, Severity: Warning, Position: named,
					Message: fmt.Sprintf("tool %s is not exposed: its name %s is taken by %s in %s, which calls %s instead of %s",
						t.ToolName, t.Name, w.ToolName, w.File, describeMethod(w), describeMethod(t)),
				})
			}
			r.Skipped = append(r.Skipped, s)
		}
	}

	r.Tools = make([]Tool, 0, len(winners))
	for _, t := range winners {
		r.Tools = append(r.Tools, t)
	}
	slices.SortFunc(r.Tools, func(a, b Tool) int { return cmp.Compare(a.Name, b.Name) })
	r.IDs = idFiles
	r.index = make(map[string]int, len(r.Tools))
	for i, t := range r.Tools {
		r.index[t.Name] = i
	}
	return r
}

// describeMethod names a tool's method and, when not the default, its socket.
func describeMethod(t Tool) string {
	if t.Socket == "" {
		return t.Method
	}
	return fmt.Sprintf("%s on %s", t.Method, t.Socket)
}
