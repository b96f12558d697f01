// Package eval holds no code: its subpackages are the evaluation side of
// tracegrid, from a rendered manifest to a report.
//
//   - sampling: policies (native:1, fps:F, uniform:M, keyframes, …) → the
//     sample times of a clip; frames: those frames, rendered from the scene
//     (or decoded from an external video), contact sheets; variants:
//     sampling-density variants of a manifest's clips for other harnesses.
//   - chat, prompts: the request a condition sends (frame labels, prompt
//     templates); client: the OpenAI-compatible client; study: the study
//     file (models × conditions, limits, budget); runner: runs a study,
//     resumable, within its spending cap; results: the SQLite store of
//     trials and the study lock.
//   - parse: a reply → count and events, never turning doubt into a
//     number; score: alignment and metrics against the trace; report: the
//     HTML/JSON/CSV/PNG report; perceiver: the reference perceiver that
//     stands in for a model.
//
// parse, score, report and results link neither GL nor libav and build
// with CGO_ENABLED=0 (internal/depcheck checks it): scoring and reporting
// stored trials needs no GPU. The generator (scene, trace, gpu, encode,
// pipeline) does not depend on eval; package job runs the two together
// (`tracegrid run`).
package eval
