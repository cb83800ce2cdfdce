package ledger

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"quire/fold"
	"quire/internal/front"
	"quire/render"
	"quire/runfolder"
	"quire/vault"
	"quire/words/event"
	"quire/words/page"
	"quire/words/refusal"
)

// subject is a definition (or the playbook) with the page that presents it.
type subject struct {
	Playbook, Type, Name string
	ID                   string // the keeper's id: <type>/<name>, or "playbook"
	Version              int
	Description          string
	Retired              bool
	Page                 *page.Page
	DataHash             string
	// Doc is the document the page is read from, as a receipt names it:
	// the definition's own, the page saved as a definition of its own, or
	// playbook.md.
	Doc ReceiptDocument
}

func (s *subject) render() render.Subject {
	return render.Subject{Type: s.Type, Name: s.Name, Description: s.Description, Version: s.Version}
}

var docCache sync.Map // type + blob → *docInfo

// document answers what ledger needs of one version of a document. Versions
// never change, so it is read and parsed once per blob and kept.
func (l *Ledger) document(typ string, v defVersion) (*docInfo, error) {
	key := typ + "\x00" + v.Blob
	if c, ok := docCache.Load(key); ok {
		return c.(*docInfo), nil
	}
	src, err := os.ReadFile(l.v.Abs(v.Path))
	if err != nil || vault.BlobID(src) != v.Blob {
		if src, err = l.v.ReadBlob(v.Blob); err != nil {
			return nil, err
		}
	}
	info, err := l.inspect(context.Background(), typ, string(src), false)
	if err != nil {
		return nil, err
	}
	info.Description = description(typ, string(src))
	docCache.Store(key, info)
	return info, nil
}

// description reads a document's description: a function's front matter
// description, a workflow's top-level description or document.summary.
func description(typ, src string) string {
	var d struct {
		Description string `yaml:"description"`
		Document    struct {
			Summary string `yaml:"summary"`
		} `yaml:"document"`
	}
	if typ != "workflow" && typ != TypePage {
		m, err := front.Read([]byte(src))
		if err != nil || m.Decode(&d, false) != nil {
			return ""
		}
	} else if yaml.Unmarshal([]byte(src), &d) != nil {
		return ""
	}
	if d.Description != "" {
		return d.Description
	}
	return d.Document.Summary
}

// pagedSubjects lists a playbook's subjects with their pages: each
// definition with the page of its document, or else the page saved as a
// definition of its own whose of names it, and the playbook's own page.
// pagedSubjects is read once for each version of the files it reads from
// (readsOnce): every caller shares the answer, and none may change it. A
// get_definition read them all: the home page of 1,000 definitions read
// them a million times.
func (l *Ledger) pagedSubjects(playbook string) ([]*subject, error) {
	files := []string{
		l.v.Abs(path.Join(playbookDir(playbook), "events.jsonl")),
		l.v.Abs(path.Join(playbookDir(playbook), "playbook.md")),
		l.v.Abs(vault.IndexFile),
	}
	return readsOnce(&l.reads.subjects, playbook, files, func() ([]*subject, error) { return l.readPagedSubjects(playbook) })
}

func (l *Ledger) readPagedSubjects(playbook string) ([]*subject, error) {
	defs, err := l.definitions(playbook)
	if err != nil {
		return nil, err
	}
	es, err := l.v.FindType("definition", func(e *vault.Entry) bool { return e.Playbook == playbook })
	if err != nil {
		return nil, err
	}
	out := l.definedSubjects(playbook, defs, es)
	if pb, err := l.playbookSubject(playbook); err == nil && pb.Page != nil {
		out = append(out, pb)
	}
	return out, nil
}

// definedSubjects lists the subjects of a playbook's definitions (defs, in
// the order of their index entries es) with their pages.
func (l *Ledger) definedSubjects(playbook string, defs map[string]*defInfo, es []vault.Entry) []*subject {
	var out []*subject
	type ownPage struct {
		page *page.Page
		doc  ReceiptDocument
	}
	own := map[string]ownPage{} // pages saved as definitions, by subject
	for _, e := range es {
		d := defs[e.DefType+"/"+e.Name]
		if d == nil || d.Type != TypePage || d.Retired {
			continue
		}
		v := d.latest()
		info, err := l.document(d.Type, v)
		if err == nil && info.Page != nil && info.Page.Of != "" {
			own[info.Page.Of] = ownPage{info.Page, ReceiptDocument{Type: d.Type, Name: d.Name, Version: v.Version, Blob: v.Blob}}
		}
	}
	for _, e := range es {
		d := defs[e.DefType+"/"+e.Name]
		if d == nil || d.Type == TypePage {
			continue
		}
		v := d.latest()
		info, err := l.document(d.Type, v)
		if err != nil {
			continue
		}
		s := &subject{Playbook: playbook, Type: d.Type, Name: d.Name, ID: d.Type + "/" + d.Name, Version: v.Version,
			Description: info.Description, Retired: d.Retired, Page: info.Page,
			Doc: ReceiptDocument{Type: d.Type, Name: d.Name, Version: v.Version, Blob: v.Blob}}
		if s.Page == nil {
			if o, ok := own[s.ID]; ok {
				s.Page, s.Doc = o.page, o.doc
			}
		}
		if s.Page != nil && s.Page.Data != nil {
			s.DataHash = page.DataHash(s.Page)
		}
		out = append(out, s)
	}
	return out
}

func (l *Ledger) playbookSubject(playbook string) (*subject, error) {
	f, err := l.readPlaybook(playbook)
	if err != nil {
		return nil, err
	}
	s := &subject{Playbook: playbook, Type: "playbook", Name: playbook, ID: "playbook", Description: f.Description,
		Doc: ReceiptDocument{Type: "playbook", Name: playbook, Blob: f.blob}}
	if f.Page != "" {
		p, _ := page.Parse([]byte(f.Page), page.Where{Form: page.ForPlaybook})
		s.Page = p
		if p != nil && p.Data != nil {
			s.DataHash = page.DataHash(p)
		}
	}
	return s, nil
}

// subjectOf finds one definition's subject.
func (l *Ledger) subjectOf(playbook, typ, name string) (*subject, error) {
	if _, err := l.definition(playbook, typ, name); err != nil {
		return nil, err
	}
	all, err := l.pagedSubjects(playbook)
	if err != nil {
		return nil, err
	}
	for _, s := range all {
		if s.Type == typ && s.Name == name {
			return s, nil
		}
	}
	return nil, refusal.At(refusal.NotFound, "/name", "playbook %s has no %s %q", playbook, typ, name)
}

// pageFiles is what a page's render reads: the work tree as it stands (the
// live views, the runs' folders and the clock), or a commit's files
// (pagesat.go), so that one render serves both.
type pageFiles interface {
	// views answers the subject's views and their standing.
	views(ctx context.Context, s *subject) (json.RawMessage, fold.Standing, error)
	// runs lists the subject's runs in the index's order.
	runs(s *subject) ([]vault.Entry, error)
	// state reads a run's state.
	state(e vault.Entry) (*runfolder.State, error)
	// now is the time the page is rendered at.
	now() time.Time
}

// workTree is pageFiles of the vault as it stands.
type workTree struct{ l *Ledger }

func (w workTree) views(ctx context.Context, s *subject) (json.RawMessage, fold.Standing, error) {
	return w.l.viewsOf(ctx, s)
}

func (w workTree) runs(s *subject) ([]vault.Entry, error) {
	return w.l.v.Find(func(e *vault.Entry) bool { return ranOf(e, s) })
}

func (w workTree) state(e vault.Entry) (*runfolder.State, error) {
	return runfolder.Folder{V: w.l.v, Rel: e.Path}.LoadState()
}

func (w workTree) now() time.Time { return w.l.Now() }

// ranOf says whether an index entry is a run of the subject.
func ranOf(e *vault.Entry, s *subject) bool {
	return e.Type == "playbook-run" && e.Playbook == s.Playbook && e.DefType == s.Type && e.Name == s.Name
}

// runsPage is a page's runs, standing, views and receipt: its runs
// template rendered over its views (or the line in place of it), their
// standing and, over the work tree, their receipt (a commit's views are
// no checkpoint of the live history).
func (l *Ledger) runsPage(ctx context.Context, src pageFiles, s *subject, format string) (*PageView, error) {
	p := &PageView{}
	if s.Page == nil || s.Page.Data == nil {
		return p, nil
	}
	views, st, err := src.views(ctx, s)
	if err != nil {
		return nil, err
	}
	p.Standing, p.Views = &st, views
	if _, live := src.(workTree); live {
		if p.Receipt, err = l.receiptOf(s, views, st); err != nil {
			return nil, err
		}
	}
	if s.Page.Runs != nil {
		p.Runs = l.runsText(s, views, st, src.now(), format)
	}
	return p, nil
}

func (l *Ledger) runsText(s *subject, views json.RawMessage, st fold.Standing, now time.Time, format string) string {
	switch st.State {
	case fold.StateRebuilding, fold.StateWaiting:
		return render.LineBuilding
	case fold.StateStalled:
		return render.LineStalled
	case fold.StateOutOfReach:
		return render.LineOutOfReach
	}
	return render.Runs(s.Page.Runs.Text, views, s.render(), now, render.Options{Format: format, FirstLine: s.Page.Runs.Line})
}

// resultOf renders a run through its subject's result template, at now.
func (l *Ledger) resultOf(s *subject, st *runfolder.State, now time.Time, format string) string {
	run := render.Run{Status: st.Status, Started: st.Started, Ended: st.Ended, Version: st.Version,
		Reason: st.Reason, Kind: st.Kind, Detail: st.Detail}
	return render.Result(s.Page.Result.Text, run, s.render(), st.Output, now,
		render.Options{Format: format, FirstLine: s.Page.Result.Line})
}

// PageView is what a read carries of a page.
type PageView struct {
	Result   string          `json:"result,omitempty"`
	Headline string          `json:"headline,omitempty"`
	Runs     string          `json:"runs,omitempty"`
	Standing *fold.Standing  `json:"standing,omitempty"`
	Receipt  *Receipt        `json:"receipt,omitempty" jsonschema:"what the kept views were folded from; verify_page checks it"`
	Glance   Glance          `json:"glance,omitempty" jsonschema:"a workflow's glance: the mapping as its page writes it, keys in the document's order, each string rendered"`
	Blocks   []ResultBlock   `json:"blocks,omitempty"`
	Source   string          `json:"source,omitempty"`
	Views    json.RawMessage `json:"-"`
}

// Glance is a workflow's glance rendered: the JSON object its page writes,
// keys in the document's order, each string rendered.
type Glance json.RawMessage

// MarshalJSON writes the object as it is.
func (g Glance) MarshalJSON() ([]byte, error) {
	if g == nil {
		return []byte("null"), nil
	}
	return g, nil
}

// UnmarshalJSON keeps the object as it is.
func (g *Glance) UnmarshalJSON(b []byte) error {
	*g = append((*g)[:0], b...)
	return nil
}

// JSONForms says what Glance's JSON takes: an object.
func (Glance) JSONForms() []any { return []any{map[string]any{}} }

// ResultBlock is one top-level block of a run's rendered result, with its
// address and the addresses of its cells.
type ResultBlock struct {
	N       int      `json:"n"`
	Kind    string   `json:"kind"`
	Address string   `json:"address"`
	Text    string   `json:"text"`
	Cells   []string `json:"cells,omitempty"`
}

func blocksOf(playbook, runID, result string) []ResultBlock {
	var out []ResultBlock
	for _, b := range render.Blocks(result) {
		rb := ResultBlock{N: b.N, Kind: b.Kind, Text: b.Text, Address: fmt.Sprintf("%s/runs/%s/result/%d", playbook, runID, b.N)}
		for m := 1; m <= b.Cells; m++ {
			rb.Cells = append(rb.Cells, fmt.Sprintf("%s/runs/%s/parts/result-%d-%d", playbook, runID, b.N, m))
		}
		out = append(out, rb)
	}
	return out
}

// runPage is get_run's page: the run rendered through its subject's
// result, where the subject has one.
func (l *Ledger) runPage(e vault.Entry, st *runfolder.State, blocks bool, format string) (*PageView, error) {
	s, err := l.subjectOf(e.Playbook, st.Type, st.Name)
	if err != nil {
		if r, ok := refusal.As(err); ok && r.Code == refusal.NotFound {
			return nil, nil
		}
		return nil, err
	}
	if s.Retired || s.Page == nil || s.Page.Result == nil {
		return nil, nil
	}
	res := l.resultOf(s, st, l.Now(), format)
	p := &PageView{Result: res, Headline: render.Headline(res)}
	if blocks {
		p.Blocks = blocksOf(e.Playbook, st.RunID, res)
	}
	return p, nil
}

// latestRun is a subject's latest run, nil before its first.
func latestRun(src pageFiles, s *subject) (*runfolder.State, error) {
	runs, err := src.runs(s)
	if err != nil || len(runs) == 0 {
		return nil, err
	}
	return src.state(runs[len(runs)-1])
}

// latestEndedRun is the subject's run that ended last (of two that ended
// at the same time, the one started later), nil before one has ended. A
// run still going is not one: glance renders over the latest ended run.
func latestEndedRun(src pageFiles, s *subject) (*runfolder.State, error) {
	runs, err := src.runs(s)
	if err != nil {
		return nil, err
	}
	var latest *runfolder.State
	var at time.Time
	for i := len(runs) - 1; i >= 0; i-- {
		st, err := src.state(runs[i])
		if err != nil {
			return nil, err
		}
		if st.Ended == "" {
			continue
		}
		ended, err := event.ParseTime(st.Ended)
		if err != nil {
			continue
		}
		if latest == nil || ended.After(at) {
			latest, at = st, ended
		}
	}
	return latest, nil
}

// glanceOf renders a workflow's glance over the views and the latest ended
// run's output and run, in the shape the page writes it.
func glanceOf(src pageFiles, s *subject, views json.RawMessage, format string) (Glance, error) {
	latest, err := latestEndedRun(src, s)
	if err != nil {
		return nil, err
	}
	run := render.Run{}
	var output []byte
	if latest != nil {
		run = render.Run{Status: latest.Status, Started: latest.Started, Ended: latest.Ended, Version: latest.Version, Reason: latest.Reason, Kind: latest.Kind, Detail: latest.Detail}
		output = latest.Output
	}
	now := src.now()
	return Glance(s.Page.RenderGlance(func(g page.Template) string {
		return render.Glance(g.Text, views, run, s.render(), output, now, render.Options{Format: format, FirstLine: g.Line})
	})), nil
}

// definitionPage is get_definition's page: runs and standing, glance, and
// in a preview result over the latest run or a sample output.
func (l *Ledger) definitionPage(ctx context.Context, src pageFiles, s *subject, preview bool, sample json.RawMessage, format string) (*PageView, error) {
	if s.Page == nil || s.Retired {
		return nil, nil
	}
	p, err := l.runsPage(ctx, src, s, format)
	if err != nil {
		return nil, err
	}
	if s.Page.GlanceValue != nil {
		if p.Glance, err = glanceOf(src, s, p.Views, format); err != nil {
			return nil, err
		}
	}
	var latest *runfolder.State
	if preview {
		if latest, err = latestRun(src, s); err != nil {
			return nil, err
		}
	}
	if preview && s.Page.Result != nil {
		now := src.now()
		switch {
		case sample != nil:
			at := event.FormatTime(now)
			st := &runfolder.State{Status: "succeeded", Started: at, Ended: at, Version: s.Version, Output: sample}
			p.Result = l.resultOf(s, st, now, format)
		case latest != nil:
			p.Result = l.resultOf(s, latest, now, format)
		}
		if p.Result != "" {
			p.Headline = render.Headline(p.Result)
		}
	}
	return p, nil
}

// checkSample checks a preview's sample_output: at most 256 KiB and 512
// levels, and fitting the subject's output shape or schema.
func (l *Ledger) checkSample(s *subject, sample json.RawMessage) error {
	if len(sample) > 256<<10 {
		return refusal.Invalid("/sample_output", "the sample output takes %d bytes; it may take at most 256 KiB as JSON", len(sample))
	}
	if !json.Valid(sample) {
		return refusal.Invalid("/sample_output", "not JSON")
	}
	depth, max := 0, 0
	inString, escaped := false, false
	for _, c := range sample {
		switch {
		case inString:
			if escaped {
				escaped = false
			} else if c == '\\' {
				escaped = true
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			max = maxInt(max, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	if max > event.MaxDepth {
		return refusal.Invalid("/sample_output", "the sample output nests %d levels; it may nest at most %d", max, event.MaxDepth)
	}
	defs, err := l.definitions(s.Playbook)
	if err != nil {
		return err
	}
	if d := defs[s.Type+"/"+s.Name]; d != nil {
		info, err := l.document(d.Type, d.latest())
		if err == nil {
			if issues := checkAgainst(info, sample, 20); len(issues) > 0 {
				msgs := make([]string, len(issues))
				for i, is := range issues {
					msgs[i] = strings.TrimPrefix(is.Path+": "+is.Message, ": ")
				}
				r := refusal.Invalid("/sample_output", "the sample output does not fit the output schema: %s", strings.Join(msgs, "; "))
				return r
			}
		}
	}
	return nil
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

type RenderPageArgs struct {
	Playbook     string          `json:"playbook"`
	Type         string          `json:"type" enum:"@definition_types"`
	Name         string          `json:"name"`
	SampleOutput json.RawMessage `json:"sample_output,omitempty" jsonschema:"an output to render result over, as a run that succeeded"`
	RunID        string          `json:"run_id,omitempty" jsonschema:"render as of this run: its result, and runs as they stood when it ended"`
	At           string          `json:"at,omitempty" jsonschema:"render as of this commit (id or ref)"`
	Format       string          `json:"format,omitempty" enum:"markdown,text"`
}

type RenderPlaybookPageArgs struct {
	Playbook string `json:"playbook"`
	Format   string `json:"format,omitempty" enum:"markdown,text"`
}

type RenderedPlaybook struct {
	Page *PageView `json:"page"`
}

// renderPage is the operation render_page (ops.go).
func (l *Ledger) renderPage(ctx context.Context, a *RenderPageArgs) (*Definition, error) {
	if err := checkFormat(a.Format); err != nil {
		return nil, err
	}
	if a.At != "" {
		return l.renderPageAt(ctx, a)
	}
	if a.RunID != "" && len(a.SampleOutput) > 0 {
		return nil, refusal.Invalid("/run_id", "run_id and sample_output do not go together: a preview renders over one or the other")
	}
	d, err := l.definitionAt(a.Playbook, a.Type, a.Name, 0, true)
	if err != nil {
		return nil, err
	}
	s, err := l.subjectOf(a.Playbook, a.Type, a.Name)
	if err != nil {
		return nil, err
	}
	if s.Page == nil {
		return nil, refusal.At(refusal.NotFound, "/name", "the %s %q has no page", a.Type, a.Name)
	}
	if s.Retired {
		return nil, refusal.At(refusal.Conflict, "/name", "the %s %q is retired: its page renders nowhere", a.Type, a.Name)
	}
	if a.RunID == "" {
		var sample json.RawMessage
		if len(a.SampleOutput) > 0 {
			if err := l.checkSample(s, a.SampleOutput); err != nil {
				return nil, err
			}
			sample = compact(a.SampleOutput)
		}
		d.Page, err = l.definitionPage(ctx, workTree{l}, s, true, sample, a.Format)
		return d, err
	}
	_, st, err := l.runState(a.Playbook, a.RunID)
	if err != nil {
		return nil, err
	}
	if st.Type != a.Type || st.Name != a.Name {
		return nil, refusal.Invalid("/run_id", "run %s is a run of %s/%s, not of %s/%s", a.RunID, st.Type, st.Name, a.Type, a.Name)
	}
	p := &PageView{}
	if s.Page.Result != nil {
		p.Result = l.resultOf(s, st, l.Now(), a.Format)
		p.Headline = render.Headline(p.Result)
	}
	if s.Page.Data != nil {
		if st.Ended == "" {
			// A run still going renders over the views as they stand.
			rp, err := l.runsPage(ctx, workTree{l}, s, a.Format)
			if err != nil {
				return nil, err
			}
			p.Runs, p.Standing, p.Receipt = rp.Runs, rp.Standing, rp.Receipt
		} else {
			views, std, err := registered(func() (json.RawMessage, fold.Standing, error) {
				ko, err := l.keeper(a.Playbook)
				if err != nil {
					return nil, fold.Standing{}, err
				}
				return ko.k.AsOf(ctx, s.ID, st.LastSeq)
			})
			if err != nil {
				return nil, err
			}
			p.Standing = &std
			if s.Page.Runs != nil {
				ended, _ := event.ParseTime(st.Ended)
				p.Runs = l.runsText(s, views, std, ended, a.Format)
			}
		}
	}
	d.Page = p
	return d, nil
}

// renderPlaybookPage is the operation render_playbook_page (ops.go).
func (l *Ledger) renderPlaybookPage(ctx context.Context, a *RenderPlaybookPageArgs) (*RenderedPlaybook, error) {
	if err := checkFormat(a.Format); err != nil {
		return nil, err
	}
	s, err := l.playbookSubject(a.Playbook)
	if err != nil {
		return nil, err
	}
	if s.Page == nil {
		return nil, refusal.At(refusal.NotFound, "/playbook", "the playbook %s has no page", a.Playbook)
	}
	p, err := l.runsPage(ctx, workTree{l}, s, a.Format)
	if err != nil {
		return nil, err
	}
	return &RenderedPlaybook{Page: p}, nil
}

// Headlines answers each run's headline, the first line of its
// page.result as get_run renders it ("" where its subject has no result),
// reading each subject's page once: for lists of runs, such as serve/web's
// runs of a definition. The runs are those a read answered (list_runs).
func (l *Ledger) Headlines(runs []*Run) []string {
	out := make([]string, len(runs))
	h := l.headlines()
	for i, r := range runs {
		out[i] = h.of(r)
	}
	return out
}

// headlines renders runs' headlines, reading each subject's page once
// however many runs it is asked for, and names each subject's rendering
// of them (key), so that a headline rendered once may be kept for the
// state it was rendered from (runindex.go).
type headlines struct {
	l        *Ledger
	subjects map[[3]string]*headlineSubject // playbook, type, name
}

type headlineSubject struct {
	s *subject // nil when it has no result to render
	// key names what a headline of a run's state depends on besides the
	// state: the result template and the subject's fields. "" when a
	// headline is not to be kept: the template reads the clock, or the
	// subject could not be read.
	key string
}

func (l *Ledger) headlines() *headlines {
	return &headlines{l: l, subjects: map[[3]string]*headlineSubject{}}
}

func (h *headlines) subject(playbook, typ, name string) *headlineSubject {
	k := [3]string{playbook, typ, name}
	if hs, ok := h.subjects[k]; ok {
		return hs
	}
	hs := &headlineSubject{}
	s, err := h.l.subjectOf(playbook, typ, name)
	switch {
	case err != nil:
	case s.Retired || s.Page == nil || s.Page.Result == nil:
		hs.key = "none"
	case !render.ReadsClock(s.Page.Result.Text):
		hs.s = s
		b, _ := json.Marshal([]any{s.Page.Result.Text, s.Page.Result.Line, s.render()})
		sum := sha256.Sum256(b)
		hs.key = hex.EncodeToString(sum[:8])
	default:
		hs.s = s
	}
	h.subjects[k] = hs
	return hs
}

// key is what a headline of a run of the definition is kept under ("" for
// none).
func (h *headlines) key(e *vault.Entry) string {
	return h.subject(e.Playbook, e.DefType, e.Name).key
}

func (h *headlines) of(r *Run) string {
	s := h.subject(r.Playbook, r.Type, r.Name).s
	if s == nil {
		return ""
	}
	st := &runfolder.State{Status: r.Status, Started: r.Started, Ended: r.Ended, Version: r.Version,
		Reason: r.Reason, Kind: r.Kind, Detail: r.Detail, Output: r.Output}
	return render.Headline(h.l.resultOf(s, st, h.l.Now(), ""))
}
