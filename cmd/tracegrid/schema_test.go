package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tracegrid/tracegrid/eval/variants"
	"github.com/tracegrid/tracegrid/trace"
)

// The JSON Schemas in docs/schema/ are generated from the Go types by this
// test: `go test ./cmd/tracegrid -run TestSchemas -update-schemas` rewrites
// them after a field changes; without the flag the test fails while a file
// and its type differ, so every field of the types is in the schema and
// the schema has no other.
var updateSchemas = flag.Bool("update-schemas", false, "rewrite docs/schema/*.schema.json from the Go types")

// schemaFiles are the published schemas and the type each describes.
var schemaFiles = []struct {
	file, title, desc string
	typ               reflect.Type
	extra             map[string]map[string]any // property → keywords added (top level)
}{
	{"trace.schema.json", "tracegrid trace (tracegrid/trace/v1)",
		"A clip's ground-truth trace, DIR/clips/<id>.trace.json (docs/trace.md). Generated from trace.Trace.",
		reflect.TypeFor[trace.Trace](), map[string]map[string]any{"schema": {"const": trace.Schema}}},
	{"dataset-row.schema.json", "tracegrid dataset.jsonl row",
		"One line of dataset.jsonl written by tracegrid variants --dataset (docs/variants.md). Generated from variants.Row.",
		reflect.TypeFor[variants.Row](), nil},
}

// genSchema is the JSON Schema (draft 2020-12) of t: objects with exactly
// their JSON fields (additionalProperties false; a field without
// omitempty is required), named structs in $defs.
func genSchema(t reflect.Type, defs map[string]any) map[string]any {
	switch t.Kind() {
	case reflect.Pointer:
		return genSchema(t.Elem(), defs)
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Interface:
		return map[string]any{} // any JSON value
	case reflect.Slice:
		return map[string]any{"type": "array", "items": genSchema(t.Elem(), defs)}
	case reflect.Array:
		return map[string]any{"type": "array", "items": genSchema(t.Elem(), defs), "minItems": t.Len(), "maxItems": t.Len()}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": genSchema(t.Elem(), defs)}
	case reflect.Struct:
		if _, done := defs[t.Name()]; !done {
			defs[t.Name()] = nil // a placeholder against recursion
			defs[t.Name()] = structSchema(t, defs)
		}
		return map[string]any{"$ref": "#/$defs/" + t.Name()}
	}
	panic("schema: no JSON Schema for kind " + t.Kind().String())
}

func structSchema(t reflect.Type, defs map[string]any) map[string]any {
	props := map[string]any{}
	required := []string{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		props[name] = genSchema(f.Type, defs)
		if !strings.Contains(","+opts+",", ",omitempty,") {
			required = append(required, name)
		}
	}
	return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}

// schemaDocument is the whole published file of one type.
func schemaDocument(file, title, desc string, t reflect.Type, extra map[string]map[string]any) []byte {
	defs := map[string]any{}
	genSchema(t, defs)
	top := defs[t.Name()].(map[string]any)
	delete(defs, t.Name())
	doc := map[string]any{
		"$schema":     "https://json-schema.org/draft/2020-12/schema",
		"$id":         "https://github.com/tracegrid/tracegrid/blob/main/docs/schema/" + file,
		"title":       title,
		"description": desc,
	}
	for k, v := range top {
		doc[k] = v
	}
	for prop, kw := range extra {
		p := top["properties"].(map[string]any)[prop].(map[string]any)
		for k, v := range kw {
			p[k] = v
		}
	}
	if len(defs) > 0 {
		doc["$defs"] = defs
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// TestSchemas: the published schemas are those of the Go types, and the
// files the tool writes — rendered traces (event and objects domains) and
// variants --dataset rows — validate against them (issue 31, item 20).
func TestSchemas(t *testing.T) {
	dir := filepath.Join("..", "..", "docs", "schema")
	compiler := jsonschema.NewCompiler()
	schemas := map[string]*jsonschema.Schema{}
	for _, s := range schemaFiles {
		want := schemaDocument(s.file, s.title, s.desc, s.typ, s.extra)
		path := filepath.Join(dir, s.file)
		if *updateSchemas {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (generate it with -update-schemas)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the Go type %s: a field was added, removed or changed; rerun with -update-schemas and review the diff", path, s.typ)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(got))
		if err != nil {
			t.Fatal(err)
		}
		if err := compiler.AddResource(s.file, doc); err != nil {
			t.Fatal(err)
		}
		if schemas[s.file], err = compiler.Compile(s.file); err != nil {
			t.Fatalf("%s: %v", s.file, err)
		}
	}

	// Real files: a render of event and objects clips, and a dataset.
	render := t.TempDir()
	events := writeFile(t, "e.yaml", "grid: default\ndomains: [bounce_ball, blinking, state_machine]\ncounts: [0, 2]\nfrequencies: [1.0]\nduration: 4\nwidth: 160\nheight: 96\n")
	if out, code := run(t, "render", "--spec", events, "--out", render); code != 0 {
		t.Fatalf("render: exit %d: %s", code, out)
	}
	objects := writeFile(t, "o.yaml", "grid: countvideobench\ncounts: [5]\nclasses: [cube-red]\nseeds: 1\nduration: 1\n")
	objDir := filepath.Join(t.TempDir(), "o")
	if out, code := run(t, "render", "--spec", objects, "--size", "160x96", "--out", objDir); code != 0 {
		t.Fatalf("render objects: exit %d: %s", code, out)
	}
	traces, _ := filepath.Glob(filepath.Join(render, "clips", "*.trace.json"))
	more, _ := filepath.Glob(filepath.Join(objDir, "clips", "*.trace.json"))
	if traces = append(traces, more...); len(traces) != 7 {
		t.Fatalf("traces %v, want 3 domains x 2 counts and 1 objects clip", traces)
	}
	ds := filepath.Join(t.TempDir(), "v")
	if out, code := run(t, "variants", "--manifest", filepath.Join(render, "manifest.jsonl"), "--policies", "fps:1,keyframes", "--out", ds, "--dataset"); code != 0 {
		t.Fatalf("variants --dataset: exit %d: %s", code, out)
	}
	for _, p := range traces {
		validateFile(t, schemas["trace.schema.json"], p)
	}
	f, err := os.Open(filepath.Join(ds, "dataset.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	rows := 0
	for sc.Scan() {
		rows++
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(sc.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if err := schemas["dataset-row.schema.json"].Validate(v); err != nil {
			t.Errorf("dataset.jsonl row %d: %v", rows, err)
		}
	}
	if rows == 0 {
		t.Error("dataset.jsonl has no rows")
	}
	t.Logf("%d traces and %d dataset rows valid", len(traces), rows)

	// And the schemas do constrain: a trace with an unknown field or a
	// count as a string is refused, as the tool's reader refuses it.
	var tr map[string]any
	if err := json.Unmarshal(must(os.ReadFile(traces[0])), &tr); err != nil {
		t.Fatal(err)
	}
	tr["extra"] = 1
	if schemas["trace.schema.json"].Validate(tr) == nil {
		t.Error("a trace with an unknown field validates")
	}
	delete(tr, "extra")
	tr["n"] = "2"
	if schemas["trace.schema.json"].Validate(tr) == nil {
		t.Error("a trace with n as a string validates")
	}
}

func validateFile(t *testing.T, s *jsonschema.Schema, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(v); err != nil {
		t.Errorf("%s: %v", path, err)
	}
}
