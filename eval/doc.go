// Package eval will hold the evaluation side of tracegrid: sampling
// policies, prompts, the OpenAI-compatible client, response parsing,
// trace alignment, metrics, capability surfaces, reports and the reference
// perceiver (see ../shared/DESIGN.md). It is empty until those issues land;
// the generator (packages scene, trace, gpu, encode, pipeline) does not
// depend on it.
package eval
