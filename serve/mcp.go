package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"quire/ledger"
	"quire/words/refusal"
)

// Version is the version quire's MCP server and OpenAPI document announce.
const Version = "0.1.0"

// RunFiles are the files of a run folder that MCP serves as resources,
// with their media types.
var RunFiles = map[string]string{
	"definition.md":  "text/markdown",
	"thread.md":      "text/markdown",
	"run.state.json": "application/json",
	"run.jsonl":      "application/jsonl",
}

// RunResourceTemplate addresses a run folder's files by the run's address
// (addresses.md: <playbook>/runs/<run_id>).
const RunResourceTemplate = "quire://{playbook}/runs/{run_id}/{file}"

const instructions = `quire keeps playbooks, their definitions and their runs as files in a git vault.
Every tool is one operation of quire's table; the same names are HTTP routes and quire call.
A refused call is a tool error whose text is {"error":{"code","message","issues"}}: fix the argument at each issue's path.
A run's files are resources: quire://<playbook>/runs/<run_id>/{definition.md,thread.md,run.state.json,run.jsonl}.`

// mcpServer makes the MCP server: one tool per operation and the run
// folder's files as resources. Over HTTP (viaHTTP) each call is
// authenticated from its request's Authorization header; over stdio and
// in memory the caller is the vault's own user, with every scope.
func (s *server) mcpServer(viaHTTP bool) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "quire", Title: "quire", Version: Version},
		&mcp.ServerOptions{Instructions: instructions, Logger: s.log})
	shown := map[reflect.Type]bool{}
	for _, op := range ledger.Ops() {
		t := &mcp.Tool{
			Name:        op.Name,
			Description: toolDescription(op),
			InputSchema: inputSchema(op),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: op.ReadOnly, IdempotentHint: op.Idempotent,
				DestructiveHint: ptr(!op.ReadOnly && destructive[op.Name]), OpenWorldHint: ptr(false)},
		}
		// Output schemas only on the reads of one thing (get_run,
		// get_definition, explain_address…): tools/list is what every agent
		// pays for in tokens at start-up, and the run's schema repeated in
		// every write and list was most of it. A write answers what its read
		// answers (the run, the definition…) and a list_ pages of them, whose
		// schema the get_ tool shows; /v1/openapi.json holds every
		// operation's answer with its words. An answer's schema is shown
		// once: render_page answers what get_definition does.
		if op.ReadOnly && !strings.HasPrefix(op.Name, "list_") && !shown[op.Result] {
			t.OutputSchema = outputSchema(op)
			shown[op.Result] = true
		}
		srv.AddTool(t, s.tool(op, viaHTTP))
	}
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "run-file",
		Title:       "A file of a run folder",
		URITemplate: RunResourceTemplate,
		Description: "A run's definition.md, thread.md, run.state.json or run.jsonl, by the run's address <playbook>/runs/<run_id>; needs playbook:read.",
	}, s.runFile(viaHTTP))
	return srv
}

// destructive are the writes that change or take away what was there (an
// artifact overwritten, a playbook's page replaced, a run archived or
// cancelled, a definition retired); the others only add to the vault.
var destructive = map[string]bool{
	"put_artifact": true, "update_playbook": true, "transition_run": true,
	"archive_idle_runs": true, "retire_definition": true, "cancel_run": true,
}

func ptr[T any](v T) *T { return &v }

// principalOf is who an MCP request acts as.
func (s *server) principalOf(viaHTTP bool, extra *mcp.RequestExtra) (*principal, error) {
	if !viaHTTP {
		return openPrincipal, nil
	}
	if extra == nil || extra.Header == nil {
		return nil, unauthenticated("this MCP request came without its HTTP header")
	}
	return s.authenticate(extra.Header.Get("Authorization"))
}

// listNote ends the description of each tool whose answer is a list.
// An MCP tool's structured content is an object, so the list travels in
// it as {"items": […]}; the text content is the list itself, as HTTP and
// the CLI answer it (the note leaves that out for tools/list's budget). One form everywhere would be a wrapper on HTTP and
// the CLI too, which every script of theirs would pay for; the note
// spares an agent finding the wrapper out by a failed read.
const listNote = " MCP: the list is structuredContent.items."

// toolDescription is an operation's description as its tool gives it.
func toolDescription(op *ledger.Op) string {
	if !answerIsObject(op) {
		return op.Description + listNote
	}
	return op.Description
}

func (s *server) tool(op *ledger.Op, viaHTTP bool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
		defer func() {
			if v := recover(); v != nil {
				res, err = toolError(panicked(op.Name, v)), nil
			}
		}()
		p, err := s.principalOf(viaHTTP, req.Extra)
		if err != nil {
			return toolError(err), nil
		}
		var raw json.RawMessage
		if req.Params != nil {
			raw = req.Params.Arguments
		}
		answer, err := s.call(ctx, p, op, raw)
		if err != nil {
			return toolError(err), nil
		}
		b, err := answerJSON(answer)
		if err != nil {
			return toolError(err), nil
		}
		var structured any = json.RawMessage(b)
		if !answerIsObject(op) {
			structured = map[string]json.RawMessage{"items": b}
		} else if string(b) == "null" {
			structured = map[string]any{}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: structured}, nil
	}
}

// toolError is a refusal as a tool error: the refusal object as its text
// and as its structured content.
func toolError(err error) *mcp.CallToolResult {
	_, r := statusOf(err)
	b, _ := answerJSON(r.Object())
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(b)}},
		StructuredContent: json.RawMessage(b)}
}

// runFile reads a file of a run folder: get_run finds the folder (and
// refuses what it refuses), the file is read from under the vault.
func (s *server) runFile(viaHTTP bool) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		uri := req.Params.URI
		rest, ok := strings.CutPrefix(uri, "quire://")
		parts := strings.Split(rest, "/")
		if !ok || len(parts) != 4 || parts[1] != "runs" {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		playbook, runID, file := parts[0], parts[2], parts[3]
		mime, ok := RunFiles[file]
		if !ok {
			return nil, fmt.Errorf("%s: a run folder's resources are %s", uri, strings.Join(runFileNames(), ", "))
		}
		p, err := s.principalOf(viaHTTP, req.Extra)
		if err != nil {
			return nil, err
		}
		op, ok := ledger.Lookup("get_run")
		if !ok {
			return nil, fmt.Errorf("this quire has no get_run operation to find run folders with")
		}
		args, _ := json.Marshal(map[string]string{"playbook": playbook, "run_id": runID})
		answer, err := s.call(ctx, p, op, args)
		if err != nil {
			if r, ok := refusal.As(err); ok && r.Code == refusal.NotFound {
				return nil, mcp.ResourceNotFoundError(uri)
			}
			return nil, err
		}
		var run struct {
			Path string `json:"path"`
		}
		b, _ := json.Marshal(answer)
		if err := json.Unmarshal(b, &run); err != nil || run.Path == "" {
			return nil, fmt.Errorf("get_run answered no path for %s/runs/%s", playbook, runID)
		}
		data, err := s.l.ReadRunFile(run.Path, file)
		if r, ok := refusal.As(err); ok && r.Code == refusal.NotFound {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		if err != nil {
			return nil, err
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mime, Text: string(data)}}}, nil
	}
}

func runFileNames() []string {
	var out []string
	for f := range RunFiles {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// NewMCPServer is quire's MCP server over l for a trusted local caller
// (stdio, in memory): every operation as a tool, with every scope.
func NewMCPServer(l *ledger.Ledger) *mcp.Server {
	return newServer(l, true, nil).mcpServer(false)
}

// mcpHTTP is the streamable HTTP transport at /mcp.
func (s *server) mcpHTTP() http.Handler {
	srv := s.mcpServer(true)
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Logger: s.log, MaxRequestBodyBytes: MaxBody + 64<<10})
}
