package ledger

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"quire/render"
	"quire/words/page"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"quire/internal/crashpoint"
	"quire/internal/front"
	"quire/vault"
	"quire/words/address"
	"quire/words/agentrun"
	"quire/words/event"
	"quire/words/near"
	"quire/words/refusal"
	"quire/words/shape"
)

// MaxDocument is the most a definition's document may hold (page-format.md,
// Limits).
const MaxDocument = 65536

// ---- projects ---------------------------------------------------------

type CreateProjectArgs struct {
	Name      string `json:"name" jsonschema:"the project's name, 1 to 200 characters"`
	Actor     string `json:"actor,omitempty" jsonschema:"who makes it; defaults to the token's principal or quire"`
	RequestID string `json:"request_id,omitempty" jsonschema:"makes a retry safe: a call repeating an id answers the first call's answer and writes nothing (HTTP: the Idempotency-Key header)"`
}

type Project struct {
	UID  string `json:"uid"`
	Name string `json:"name"`
	Path string `json:"path"`
}

var slugRE = regexp.MustCompile(`[^a-z0-9]+`)

func slugOf(name string) string {
	s := strings.Trim(slugRE.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if len(s) > 48 {
		s = strings.TrimRight(s[:48], "-")
	}
	return s
}

func actorOr(a string) string {
	if a == "" {
		return "quire"
	}
	return a
}

// createProject is the operation create_project (ops.go).
func (l *Ledger) createProject(ctx context.Context, a *CreateProjectArgs) (*Project, error) {
	name := strings.TrimSpace(a.Name)
	if name == "" || len(name) > 200 || strings.ContainsAny(name, "\n\r") {
		return nil, refusal.Invalid("/name", "a project's name is 1 to 200 characters on one line")
	}
	slug := slugOf(name)
	if slug == "" {
		return nil, refusal.Invalid("/name", "a project's name needs at least one letter or digit")
	}
	p := &Project{UID: newID(), Name: name, Path: path.Join("projects", slug+".md")}
	err := l.write(writeArgs{Request: requestIn(ctx)}, func(t *tx) error {
		t.answerWith(func() (any, error) { return p, nil })
		if l.v.Exists(p.Path) {
			return refusal.At(refusal.Conflict, "/name", "a project with the slug %q already exists at %s", slug, p.Path)
		}
		doc, _ := yaml.Marshal(map[string]string{"uid": p.UID, "name": name, "type": "project"})
		if err := t.writeNew(p.Path, []byte("---\n"+string(doc)+"---\n")); err != nil {
			return err
		}
		if err := l.v.Register(vault.Entry{UID: p.UID, Type: "project", Path: p.Path, Name: name, Created: event.FormatTime(l.Now())}); err != nil {
			return err
		}
		t.commit([]string{p.Path, vault.IndexFile}, vault.Signature{Name: actorOr(a.Actor), When: l.Now()}, vault.Message{Subject: "Make the project " + name})
		return nil
	})
	return p, err
}

// listProjects is the operation list_projects (ops.go).
func (l *Ledger) listProjects(ctx context.Context, a *struct{}) ([]Project, error) {
	es, err := l.v.FindType("project", func(*vault.Entry) bool { return true })
	out := []Project{}
	for _, e := range es {
		out = append(out, Project{UID: e.UID, Name: e.Name, Path: e.Path})
	}
	return out, err
}

// writeNew makes or replaces a file (and makes its folders) atomically.
func (t *tx) writeNew(rel string, data []byte) error {
	abs, err := t.l.v.Join(rel)
	if err != nil {
		return err
	}
	if err := t.touch(rel, false); err != nil {
		return err
	}
	crashpoint.Hit()
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return err
	}
	return vault.WriteAtomic(abs, data)
}

// ---- playbooks --------------------------------------------------------

type CreatePlaybookArgs struct {
	Playbook    string `json:"playbook" jsonschema:"the playbook's id: 3 to 48 lowercase letters, digits and hyphens, beginning with a letter"`
	Name        string `json:"name" jsonschema:"its name as people read it"`
	Description string `json:"description,omitempty"`
	Actor       string `json:"actor,omitempty"`
	RequestID   string `json:"request_id,omitempty" jsonschema:"makes a retry safe: a call repeating an id answers the first call's answer and writes nothing (HTTP: the Idempotency-Key header)"`
}

type PlaybookArgs struct {
	Playbook string `json:"playbook"`
}

type Playbook struct {
	UID         string    `json:"uid"`
	Playbook    string    `json:"playbook"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Address     string    `json:"address"`
	Page        *PageView `json:"page,omitempty"`
	Definitions int       `json:"definitions"`
	Runs        int       `json:"runs"`
}

type playbookFront struct {
	UID         string `yaml:"uid"`
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Page        string `yaml:"page,omitempty"`
	// Home is the node that writes the playbook, when several servers
	// meet at one remote (remotes.go); none: any node writes it.
	Home string `yaml:"home,omitempty"`
	// blob is the git blob id of playbook.md as read.
	blob string
}

func checkPlaybookID(p string) error {
	if !address.ValidPlaybookID(p) {
		return refusal.Invalid("/playbook", "%q is not a playbook id: 3 to 48 lowercase letters, digits and hyphens, beginning with a letter", p)
	}
	return nil
}

func (l *Ledger) readPlaybook(p string) (*playbookFront, error) {
	if err := checkPlaybookID(p); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(l.v.Abs(path.Join(playbookDir(p), "playbook.md")))
	if isNotExist(err) {
		return nil, l.noPlaybook(p)
	}
	if err != nil {
		return nil, err
	}
	f, err := parsePlaybookFront(data)
	if err != nil {
		return nil, fmt.Errorf("%s/playbook.md: %v", playbookDir(p), err)
	}
	return f, nil
}

// parsePlaybookFront reads a playbook.md's front matter.
func parsePlaybookFront(data []byte) (*playbookFront, error) {
	f := playbookFront{blob: vault.BlobID(data)}
	m, err := front.Read(data)
	if err == nil {
		err = m.Decode(&f, false)
	}
	return &f, err
}

// createPlaybook is the operation create_playbook (ops.go).
func (l *Ledger) createPlaybook(ctx context.Context, a *CreatePlaybookArgs) (*Playbook, error) {
	if err := checkPlaybookID(a.Playbook); err != nil {
		return nil, err
	}
	if strings.TrimSpace(a.Name) == "" || len(a.Name) > 200 {
		return nil, refusal.Invalid("/name", "a playbook's name is 1 to 200 characters")
	}
	uid := newID()
	err := l.write(writeArgs{Keeps: playbookKeeps(a.Playbook), Request: requestIn(ctx)}, func(t *tx) error {
		t.answerWith(func() (any, error) { return l.playbookOf(a.Playbook) })
		dir := playbookDir(a.Playbook)
		// A folder without either file (one a stopped write left) is
		// no playbook yet.
		if l.v.Exists(path.Join(dir, "playbook.md")) || l.v.Exists(path.Join(dir, "events.jsonl")) {
			return refusal.At(refusal.Conflict, "/playbook", "the playbook %q already exists", a.Playbook)
		}
		fm, _ := yaml.Marshal(playbookFront{UID: uid, Name: a.Name, Description: a.Description})
		if err := t.writeNew(path.Join(dir, "playbook.md"), []byte("---\n"+string(fm)+"---\n")); err != nil {
			return err
		}
		now := l.Now()
		if err := t.recordPlaybookEvent(a.Playbook, &event.Line{Event: event.PlaybookCreated, Timestamp: event.FormatTime(now),
			Detail: "Playbook created", Actor: actorOr(a.Actor), Data: mustJSON(map[string]string{"name": a.Name})}); err != nil {
			return err
		}
		if err := l.v.Register(vault.Entry{UID: uid, Type: "playbook", Path: dir, Playbook: a.Playbook, Name: a.Name, Created: event.FormatTime(now)}); err != nil {
			return err
		}
		t.commit([]string{dir, vault.IndexFile}, vault.Signature{Name: actorOr(a.Actor), When: now}, vault.Message{Subject: fmt.Sprintf("%s: make the playbook", a.Playbook)})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return l.playbookOf(a.Playbook)
}

// getPlaybook is the operation get_playbook (ops.go).
func (l *Ledger) getPlaybook(ctx context.Context, a *PlaybookArgs) (*Playbook, error) {
	return l.playbookOf(a.Playbook)
}

// listPlaybooks is the operation list_playbooks (ops.go).
func (l *Ledger) listPlaybooks(ctx context.Context, a *struct{}) ([]*Playbook, error) {
	es, err := l.v.FindType("playbook", func(*vault.Entry) bool { return true })
	if err != nil {
		return nil, err
	}
	out := []*Playbook{}
	for _, e := range es {
		p, err := l.playbookOf(e.Playbook)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func (l *Ledger) playbookOf(p string) (*Playbook, error) {
	f, err := l.readPlaybook(p)
	if err != nil {
		return nil, err
	}
	defs, err := l.definitions(p)
	if err != nil {
		return nil, err
	}
	runs, err := l.v.Find(func(e *vault.Entry) bool { return e.Type == "playbook-run" && e.Playbook == p })
	if err != nil {
		return nil, err
	}
	out := &Playbook{UID: f.UID, Playbook: p, Name: f.Name, Description: f.Description, Address: "playbooks/" + p,
		Definitions: len(defs), Runs: len(runs)}
	if f.Page != "" {
		out.Page = &PageView{Source: f.Page}
	}
	return out, nil
}

// ---- definitions ------------------------------------------------------

type DefinitionArgs struct {
	Playbook string `json:"playbook"`
	Type     string `json:"type" jsonschema:"reasoning, lookup, interaction, prediction, computation, generation or workflow"`
	Name     string `json:"name" jsonschema:"3 to 48 lowercase letters, digits and hyphens, beginning with a letter"`
}

type SaveDefinitionArgs struct {
	Playbook  string `json:"playbook"`
	Type      string `json:"type" enum:"@definition_types"`
	Name      string `json:"name"`
	Source    string `json:"source" jsonschema:"the document: YAML (or JSON) for a workflow, Markdown with YAML front matter for a function"`
	Actor     string `json:"actor,omitempty"`
	RequestID string `json:"request_id,omitempty" jsonschema:"makes a retry safe: a call repeating an id answers the first call's answer and writes nothing (HTTP: the Idempotency-Key header)"`
}

type GetDefinitionArgs struct {
	Playbook     string          `json:"playbook"`
	Type         string          `json:"type" enum:"@definition_types"`
	Name         string          `json:"name"`
	Version      int             `json:"version,omitempty" jsonschema:"an earlier version to read back; the current one when left out"`
	Render       bool            `json:"render,omitempty" jsonschema:"the preview: also render page.result, over sample_output or the latest run"`
	SampleOutput json.RawMessage `json:"sample_output,omitempty" jsonschema:"an output to render result over, as a run that succeeded; needs render"`
	Format       string          `json:"format,omitempty" enum:"markdown,text" jsonschema:"markdown (default), or text: every chart block printed as its data's table"`
}

type RetireDefinitionArgs struct {
	Playbook  string `json:"playbook"`
	Type      string `json:"type" enum:"@definition_types"`
	Name      string `json:"name"`
	Actor     string `json:"actor,omitempty"`
	RequestID string `json:"request_id,omitempty" jsonschema:"makes a retry safe: a call repeating an id answers the first call's answer and writes nothing (HTTP: the Idempotency-Key header)"`
}

// Definition is a definition as reads answer it.
type Definition struct {
	UID      string `json:"uid"`
	Playbook string `json:"playbook"`
	Type     string `json:"type"`
	Name     string `json:"name"`
	Version  int    `json:"version"`
	Latest   int    `json:"latest_version"`
	Retired  bool   `json:"retired"`
	Path     string `json:"path"`
	Blob     string `json:"blob"`
	Saved    string `json:"saved"`
	Address  string `json:"address"`
	Source   string `json:"source,omitempty"`
	// OutputSchema is the shape's schema, for a definition that declares
	// output.shape and for every prediction function (series), and
	// Details.Shape its name.
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	Details      *Details        `json:"details,omitempty"`
	// Warnings are what a save accepts but an author should know, each at
	// its line of the source: a reasoning function's shape is sent to the
	// provider as its output schema, with what that loses.
	Warnings []refusal.Issue `json:"warnings,omitempty"`
	// Steps are a workflow's steps, so that an agent need not parse its
	// document to know what to record.
	Steps []Step    `json:"steps,omitempty" jsonschema:"a workflow's steps, in order"`
	Page  *PageView `json:"page,omitempty"`
}

// Details says what a definition answers.
type Details struct {
	Shape string `json:"shape,omitempty"`
}

// defVersion is one save of a definition, from definition_saved.
type defVersion struct {
	Version int    `json:"version"`
	Blob    string `json:"blob"`
	Path    string `json:"path"`
	Type    string `json:"type"`
	Name    string `json:"name"`
	UID     string `json:"uid"`
	at      string
}

type defInfo struct {
	UID      string
	Type     string
	Name     string
	Path     string
	Versions []defVersion
	Retired  bool
}

func (d *defInfo) latest() defVersion { return d.Versions[len(d.Versions)-1] }

// definitions reads the playbook's definitions from its events.jsonl,
// once for each version of the file (readsOnce): every caller shares the
// answer, and none may change it.
func (l *Ledger) definitions(p string) (map[string]*defInfo, error) {
	file := l.v.Abs(path.Join(playbookDir(p), "events.jsonl"))
	return readsOnce(&l.reads.defs, p, []string{file}, func() (map[string]*defInfo, error) { return l.readDefinitions(p) })
}

func (l *Ledger) readDefinitions(p string) (map[string]*defInfo, error) {
	f, err := os.Open(l.v.Abs(path.Join(playbookDir(p), "events.jsonl")))
	if isNotExist(err) {
		return map[string]*defInfo{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return definitionsIn(f)
}

// definitionsIn reads every definition of a playbook from the lines of its
// events.jsonl.
func definitionsIn(r io.Reader) (map[string]*defInfo, error) {
	out := map[string]*defInfo{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), event.MaxLine+1)
	for sc.Scan() {
		ln, err := event.Parse(sc.Bytes())
		if err != nil {
			continue
		}
		switch ln.Event {
		case event.DefinitionSaved:
			var v defVersion
			if json.Unmarshal(ln.Data, &v) != nil {
				continue
			}
			v.at = ln.Timestamp
			key := v.Type + "/" + v.Name
			d := out[key]
			if d == nil {
				d = &defInfo{UID: v.UID, Type: v.Type, Name: v.Name, Path: v.Path}
				out[key] = d
			}
			d.Versions = append(d.Versions, v)
		case event.DefinitionRetired:
			if d := out[ln.Subject]; d != nil {
				d.Retired = true
			}
		}
	}
	return out, sc.Err()
}

func checkDefinitionArgs(playbook, typ, name string) error {
	if err := checkPlaybookID(playbook); err != nil {
		return err
	}
	if !address.ValidType(typ) && typ != TypePage {
		return refusal.Invalid("/type", "%q is not a type%s", typ, near.Suggest(typ, append(address.Types(), TypePage), "the types"))
	}
	if !address.ValidName(name) {
		return refusal.Invalid("/name", "%q is not a name: 3 to 48 lowercase letters, digits and hyphens, beginning with a letter", name)
	}
	return nil
}

func (l *Ledger) definition(playbook, typ, name string) (*defInfo, error) {
	if err := checkDefinitionArgs(playbook, typ, name); err != nil {
		return nil, err
	}
	if _, err := l.readPlaybook(playbook); err != nil {
		return nil, err
	}
	defs, err := l.definitions(playbook)
	if err != nil {
		return nil, err
	}
	d := defs[typ+"/"+name]
	if d == nil {
		return nil, noDefinition(playbook, typ, name, defs, "")
	}
	return d, nil
}

// noPlaybook refuses a playbook the vault does not hold, naming the
// nearest of those it holds, and them (near.Suggest).
func (l *Ledger) noPlaybook(p string) error {
	es, err := l.v.FindType("playbook", func(*vault.Entry) bool { return true })
	if err != nil {
		return err
	}
	ids := make([]string, len(es))
	for i, e := range es {
		ids[i] = e.Playbook
	}
	hint := near.Suggest(p, ids, "the playbooks")
	if hint == "" {
		hint = "; the vault holds none yet (create_playbook makes one)"
	}
	return refusal.At(refusal.NotFound, "/playbook", "no playbook %q%s", p, hint)
}

// noDefinition refuses a definition the playbook does not hold, naming
// the nearest of its definitions of that type, and them; then, when
// given, what to do.
func noDefinition(playbook, typ, name string, defs map[string]*defInfo, then string) error {
	var names []string
	for key := range defs {
		if t, n, _ := strings.Cut(key, "/"); t == typ {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	msg := fmt.Sprintf("playbook %s has no %s %q%s", playbook, typ, name, near.Suggest(name, names, "its "+typ+" definitions"))
	if then != "" {
		msg += "; " + then
	}
	return refusal.At(refusal.NotFound, "/name", "%s", msg)
}

func definitionPath(playbook, typ, name string) string {
	ext := ".md"
	if typ == "workflow" || typ == TypePage {
		ext = ".yaml"
	}
	return path.Join(playbookDir(playbook), "definitions", typ, name+ext)
}

// parseDocument checks that a document parses as its type needs: a
// workflow is a YAML (or JSON) mapping, a function Markdown with YAML front
// matter. Issues carry their line.
func parseDocument(typ, source string) error {
	if len(source) > MaxDocument {
		return refusal.WithIssues(refusal.InvalidInput, []refusal.Issue{{Path: "/source", Message: fmt.Sprintf("The document takes %d bytes; a document holds at most 65,536 bytes.", len(source))}})
	}
	if strings.TrimSpace(source) == "" {
		return refusal.Invalid("/source", "the document is empty")
	}
	if typ == "workflow" {
		if is := agentrun.Misread(source); is != nil {
			return refusal.WithIssues(refusal.InvalidInput, []refusal.Issue{*is})
		}
	}
	if typ == "workflow" || typ == TypePage {
		var node yaml.Node
		if err := yaml.Unmarshal([]byte(source), &node); err != nil {
			return refusal.WithIssues(refusal.InvalidInput, []refusal.Issue{yamlIssue(err)})
		}
		if len(node.Content) == 0 || node.Content[0].Kind != yaml.MappingNode {
			return refusal.WithIssues(refusal.InvalidInput, []refusal.Issue{{Path: "/source", Line: 1, Message: "A workflow's document is a YAML mapping."}})
		}
		return nil
	}
	m, err := front.Read([]byte(source))
	if errors.Is(err, front.ErrNone) {
		return refusal.WithIssues(refusal.InvalidInput, []refusal.Issue{{Path: "/source", Line: 1, Message: "A function's document begins with YAML front matter between --- lines."}})
	}
	// A front matter never closed or writing a key twice is refused in
	// package front's words; YAML that does not parse, or is not a
	// mapping, says so.
	var fm map[string]any
	parse := err == nil
	if parse {
		err = m.Decode(&fm, false)
	}
	var fe *front.Error
	if errors.As(err, &fe) {
		line, msg := max(fe.Line, 1), fe.Message
		if parse || fe.Syntax {
			msg = "The front matter does not parse: " + msg
		}
		return refusal.WithIssues(refusal.InvalidInput, []refusal.Issue{{Path: "/source", Line: line, Message: msg}})
	}
	return err
}

var yamlLineRE = regexp.MustCompile(`^line (\d+): `)

// yamlIssue is yaml.v3's error of a document that does not parse, at its
// line. yaml.v3 writes the line into its words ("yaml: line 3: did not
// find expected node content"); the issue carries it as its line, so it
// is said once (a CLI prints it as FILE:3:), and line 1 when yaml.v3
// names none.
func yamlIssue(err error) refusal.Issue {
	msg, line := strings.TrimPrefix(err.Error(), "yaml: "), 1
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
	}
	return refusal.Issue{Path: "/source", Line: line, Message: "The document is not YAML: " + msg}
}

// saveDefinition saves a definition: a new one, or with update a new
// version of one that exists (create_definition, update_definition).
func (l *Ledger) saveDefinition(ctx context.Context, a *SaveDefinitionArgs, update bool) (*Definition, error) {
	if err := checkDefinitionArgs(a.Playbook, a.Type, a.Name); err != nil {
		return nil, err
	}
	if err := parseDocument(a.Type, a.Source); err != nil {
		return nil, err
	}
	if err := l.checkSave(ctx, a); err != nil {
		return nil, err
	}
	err := l.write(writeArgs{Keeps: playbookKeeps(a.Playbook), Request: requestIn(ctx)}, func(t *tx) error {
		t.answerWith(func() (any, error) { return l.definitionAt(a.Playbook, a.Type, a.Name, 0, true) })
		if _, err := l.readPlaybook(a.Playbook); err != nil {
			return err
		}
		defs, err := l.definitions(a.Playbook)
		if err != nil {
			return err
		}
		d := defs[a.Type+"/"+a.Name]
		switch {
		case update && d == nil:
			return noDefinition(a.Playbook, a.Type, a.Name, defs, "create_definition makes it")
		case !update && d != nil:
			return refusal.At(refusal.Conflict, "/name", "playbook %s already has the %s %q; update_definition saves a new version", a.Playbook, a.Type, a.Name)
		case d != nil && d.Retired:
			return refusal.At(refusal.Conflict, "/name", "the %s %q is retired", a.Type, a.Name)
		}
		v := defVersion{Version: 1, Type: a.Type, Name: a.Name, Path: definitionPath(a.Playbook, a.Type, a.Name), UID: newID()}
		if a.Type == "workflow" && agentrun.Is(a.Source) {
			v.Path = strings.TrimSuffix(v.Path, ".yaml") + ".json"
		}
		if d != nil && path.Ext(d.latest().Path) != path.Ext(v.Path) {
			// Its file keeps one name: an AgentRun document
			// (.json) and a YAML workflow are different
			// definitions.
			return refusal.At(refusal.Conflict, "/source", "the workflow %q is %s; a new version is one too (save the other form under a new name)", a.Name, formOf(d.latest().Path))
		}
		if d != nil {
			v.Version = d.latest().Version + 1
			v.UID = d.UID
		}
		v.Blob = vault.BlobID([]byte(a.Source))
		if err := t.writeNew(v.Path, []byte(a.Source)); err != nil {
			return err
		}
		now := l.Now()
		if err := t.recordPlaybookEvent(a.Playbook, &event.Line{Event: event.DefinitionSaved, Timestamp: event.FormatTime(now),
			Detail: fmt.Sprintf("Saved version %d", v.Version), Subject: a.Type + "/" + a.Name, Version: v.Version,
			Actor: actorOr(a.Actor), Data: mustJSON(v)}); err != nil {
			return err
		}
		paths := []string{v.Path, path.Join(playbookDir(a.Playbook), "events.jsonl")}
		if d == nil {
			if err := l.v.Register(vault.Entry{UID: v.UID, Type: "definition", Path: v.Path, Playbook: a.Playbook,
				Name: a.Name, DefType: a.Type, Created: event.FormatTime(now)}); err != nil {
				return err
			}
			paths = append(paths, vault.IndexFile)
		}
		t.commit(paths, vault.Signature{Name: actorOr(a.Actor), When: now}, vault.Message{Subject: fmt.Sprintf("%s: save %s/%s version %d", a.Playbook, a.Type, a.Name, v.Version)})
		return nil
	})
	if err != nil {
		return nil, err
	}
	l.wake(a.Playbook) // its page may have changed
	return l.definitionAt(a.Playbook, a.Type, a.Name, 0, true)
}

// createDefinition is the operation create_definition (ops.go).
func (l *Ledger) createDefinition(ctx context.Context, a *SaveDefinitionArgs) (*Definition, error) {
	return l.saveDefinition(ctx, a, false)
}

// updateDefinition is the operation update_definition (ops.go).
func (l *Ledger) updateDefinition(ctx context.Context, a *SaveDefinitionArgs) (*Definition, error) {
	return l.saveDefinition(ctx, a, true)
}

// getDefinition is the operation get_definition (ops.go).
func (l *Ledger) getDefinition(ctx context.Context, a *GetDefinitionArgs) (*Definition, error) {
	if err := checkFormat(a.Format); err != nil {
		return nil, err
	}
	if len(a.SampleOutput) > 0 && !a.Render {
		return nil, refusal.Invalid("/sample_output", "sample_output is for the preview: it needs render: true")
	}
	d, err := l.definitionAt(a.Playbook, a.Type, a.Name, a.Version, true)
	if err != nil {
		return nil, err
	}
	s, err := l.subjectOf(a.Playbook, a.Type, a.Name)
	if err != nil {
		return nil, err
	}
	if a.Render {
		if s.Page == nil {
			return nil, refusal.Invalid("/render", "the %s %q has no page to render", a.Type, a.Name)
		}
		if s.Retired {
			return nil, refusal.At(refusal.Conflict, "/name", "the %s %q is retired: its page renders nowhere", a.Type, a.Name)
		}
		if len(a.SampleOutput) > 0 {
			if err := l.checkSample(s, a.SampleOutput); err != nil {
				return nil, err
			}
		}
	}
	var sample json.RawMessage
	if len(a.SampleOutput) > 0 {
		sample = compact(a.SampleOutput)
	}
	if d.Page, err = l.definitionPage(ctx, workTree{l}, s, a.Render, sample, a.Format); err != nil {
		return nil, err
	}
	return d, nil
}

// listDefinitions is the operation list_definitions (ops.go).
func (l *Ledger) listDefinitions(ctx context.Context, a *PlaybookArgs) ([]*Definition, error) {
	if _, err := l.readPlaybook(a.Playbook); err != nil {
		return nil, err
	}
	es, err := l.v.FindType("definition", func(e *vault.Entry) bool { return e.Playbook == a.Playbook })
	if err != nil {
		return nil, err
	}
	defs, err := l.definitions(a.Playbook)
	if err != nil {
		return nil, err
	}
	out := []*Definition{}
	for _, e := range es {
		if d := defs[e.DefType+"/"+e.Name]; d != nil {
			def := definitionOf(a.Playbook, d, d.latest())
			l.withShape(def)
			out = append(out, def)
		}
	}
	return out, nil
}

// retireDefinition is the operation retire_definition (ops.go).
func (l *Ledger) retireDefinition(ctx context.Context, a *RetireDefinitionArgs) (*Definition, error) {
	err := l.write(writeArgs{Keeps: playbookKeeps(a.Playbook)}, func(t *tx) error {
		d, err := l.definition(a.Playbook, a.Type, a.Name)
		if err != nil || d.Retired {
			return err
		}
		now := l.Now()
		if err := t.recordPlaybookEvent(a.Playbook, &event.Line{Event: event.DefinitionRetired, Timestamp: event.FormatTime(now),
			Detail: "Retired", Subject: a.Type + "/" + a.Name, Version: d.latest().Version, Actor: actorOr(a.Actor)}); err != nil {
			return err
		}
		t.commit([]string{path.Join(playbookDir(a.Playbook), "events.jsonl")}, vault.Signature{Name: actorOr(a.Actor), When: now}, vault.Message{Subject: fmt.Sprintf("%s: retire %s/%s", a.Playbook, a.Type, a.Name)})
		return nil
	})
	if err != nil {
		return nil, err
	}
	l.wake(a.Playbook) // its page's views are no longer kept
	return l.definitionAt(a.Playbook, a.Type, a.Name, 0, false)
}

func definitionOf(playbook string, d *defInfo, v defVersion) *Definition {
	return &Definition{UID: d.UID, Playbook: playbook, Type: d.Type, Name: d.Name, Version: v.Version, Latest: d.latest().Version,
		Retired: d.Retired, Path: v.Path, Blob: v.Blob, Saved: v.at,
		Address: fmt.Sprintf("%s/definitions/%s/%s/%d", playbook, d.Type, d.Name, v.Version)}
}

func (l *Ledger) definitionAt(playbook, typ, name string, version int, withSource bool) (*Definition, error) {
	d, err := l.definition(playbook, typ, name)
	if err != nil {
		return nil, err
	}
	v := d.latest()
	if version != 0 {
		if version < 0 || version > len(d.Versions) {
			return nil, refusal.At(refusal.NotFound, "/version", "%s/%s has no version %d; its versions are 1 to %d", typ, name, version, len(d.Versions))
		}
		v = d.Versions[version-1]
	}
	out := definitionOf(playbook, d, v)
	if withSource {
		src, err := l.v.ReadBlob(v.Blob)
		if err != nil {
			// The current version is also on disk.
			if v.Version != d.latest().Version {
				return nil, fmt.Errorf("reading version %d of %s/%s: %w", v.Version, typ, name, err)
			}
			if src, err = os.ReadFile(l.v.Abs(v.Path)); err != nil {
				return nil, err
			}
		}
		out.Source = string(src)
		if typ == "workflow" {
			out.Steps = workflowSteps(out.Source)
		}
		l.withShape(out)
	}
	return out, nil
}

// checkSave checks a document as a save does: its output shape or schema
// and its page, module type check included.
func (l *Ledger) checkSave(ctx context.Context, a *SaveDefinitionArgs) error {
	_, err := l.inspect(ctx, a.Type, a.Source, true)
	return err
}

// withShape adds output_schema and details.shape to a definition that
// declares output.shape, and to every prediction function, whose questions
// answer a series (output-shapes.md); a reasoning function's shape carries
// the spec's warnings at the line of output.shape.
func (l *Ledger) withShape(d *Definition) {
	if d.Type == "prediction" {
		d.OutputSchema = shape.Schema("series")
		d.Details = &Details{Shape: "series"}
		return
	}
	info, err := l.document(d.Type, defVersion{Blob: d.Blob, Path: d.Path})
	if err != nil {
		return
	}
	d.Warnings = pageWarnings(info.Page)
	if info.Shape == "" {
		return
	}
	d.OutputSchema = shape.Schema(info.Shape)
	d.Details = &Details{Shape: info.Shape}
	if d.Type == "reasoning" {
		d.Warnings = append(d.Warnings, []refusal.Issue{
			{Path: "/source", Line: info.ShapeLine, Message: "/output/shape: Anthropic models do not receive the shapes' bounds."},
			{Path: "/source", Line: info.ShapeLine, Message: "/output/shape: The shapes' optional fields are not portable to strict structured outputs."},
		}...)
	}
}

// pageWarnings are what a page's save takes but its render will refuse:
// a chart naming roles over a view declared in a shape other than table.
func pageWarnings(p *page.Page) []refusal.Issue {
	if p == nil {
		return nil
	}
	var out []refusal.Issue
	for _, t := range []*page.Template{p.Result, p.Runs} {
		if t != nil {
			out = append(out, render.ChartWarnings(t.Text, t.Line, p.ViewMap())...)
		}
	}
	return out
}
