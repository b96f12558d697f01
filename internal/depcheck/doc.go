// Package depcheck holds no code, only a test: the scoring and reporting
// packages (eval/score, eval/parse, eval/report, eval/results) link
// neither GL nor libav nor any other cgo package, and they and their
// tests build with CGO_ENABLED=0. Only gpu may import GL and only encode
// libav (README, "Layout"); a machine without either can still score
// stored trials and write reports. The test runs the go command, so it
// needs the go tool on PATH (go test puts it there).
package depcheck
