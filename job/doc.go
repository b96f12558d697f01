// Package job is tracegrid's main job — `tracegrid run` — as a function:
// Run renders a spec's clips (pipeline), serves the reference perceiver
// in-process on a loopback port, evaluates it under a Study into a results
// database (eval/runner) and writes the report with the Cases section's
// contact sheets (eval/report, CaseSheets). The CLI only parses flags,
// picks how progress is shown and prints where the report is; everything
// else, including the built-in study (BuiltinStudy), lives here, so the
// whole path is testable without the binary.
//
// A rerun into the same directory resumes: finished clips and trials are
// kept (pipeline.Render and runner.Run's rules), and the report is
// rewritten from every trial of the study.
//
// Layout of Options.Out:
//
//	render/           clips, traces and manifest.jsonl (pipeline)
//	results.sqlite    one row per trial (eval/results)
//	report/           index.html, summary.json, cases.html, tables/, figures/ (eval/report)
package job
