package shard

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// MaxCount is the largest number of shards accepted. It is far above what
// schedulers allow in one array (Slurm's MaxArraySize tops out near four
// million only when raised; Kubernetes Indexed Jobs take at most 100,000
// completions) and keeps a typo such as 1/10000000000 from allocating
// millions of empty parts.
const MaxCount = 1_000_000

// Shard is part Index of Count, 1-based: 1 ≤ Index ≤ Count. The zero value
// is not a valid shard; Whole is the entire plan.
type Shard struct {
	Index int
	Count int
}

// Whole is the entire plan as one shard, 1/1.
var Whole = Shard{Index: 1, Count: 1}

// String is the flag form, "I/N".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Dir is the shard's directory name under DIR/shards: "I-of-N".
func (s Shard) Dir() string { return fmt.Sprintf("%d-of-%d", s.Index, s.Count) }

// IsWhole reports whether the shard is the entire plan (1/1).
func (s Shard) IsWhole() bool { return s == Whole }

// Validate checks 1 ≤ Index ≤ Count ≤ MaxCount.
func (s Shard) Validate() error {
	switch {
	case s.Count < 1:
		return fmt.Errorf("shard %s: the number of shards must be at least 1", s)
	case s.Count > MaxCount:
		return fmt.Errorf("shard %s: at most %d shards", s, MaxCount)
	case s.Index < 1:
		return fmt.Errorf("shard %s: shards are numbered from 1", s)
	case s.Index > s.Count:
		return fmt.Errorf("shard %s: shard %d does not exist, there are %d", s, s.Index, s.Count)
	}
	return nil
}

// Parse reads "I/N" (1-based, e.g. "2/3"). Both numbers are plain decimal
// digits; anything else (spaces, signs, "2of3", "0/3", "4/3", "1/0") is an
// error that quotes the input.
func Parse(text string) (Shard, error) {
	is, ns, ok := strings.Cut(text, "/")
	if !ok {
		return Shard{}, fmt.Errorf("shard %q: want I/N, e.g. 2/3 for the second of three", text)
	}
	i, err := parseCount(is)
	if err != nil {
		return Shard{}, fmt.Errorf("shard %q: index: %w", text, err)
	}
	n, err := parseCount(ns)
	if err != nil {
		return Shard{}, fmt.Errorf("shard %q: count: %w", text, err)
	}
	s := Shard{Index: i, Count: n}
	if err := s.Validate(); err != nil {
		return Shard{}, err
	}
	return s, nil
}

// ParseDir reads a shard directory name, "I-of-N" (Dir's form).
func ParseDir(name string) (Shard, error) {
	is, ns, ok := strings.Cut(name, "-of-")
	if !ok {
		return Shard{}, fmt.Errorf("shard directory %q: want I-of-N, e.g. 2-of-3", name)
	}
	i, err1 := parseCount(is)
	n, err2 := parseCount(ns)
	if err := errors.Join(err1, err2); err != nil {
		return Shard{}, fmt.Errorf("shard directory %q: want I-of-N: %w", name, err)
	}
	s := Shard{Index: i, Count: n}
	if err := s.Validate(); err != nil {
		return Shard{}, fmt.Errorf("shard directory %q: %w", name, err)
	}
	return s, nil
}

// parseCount reads a non-negative decimal integer of plain digits (no sign,
// no spaces, no underscores), at most 9 digits so it cannot overflow.
func parseCount(s string) (int, error) {
	if s == "" {
		return 0, errors.New("empty number")
	}
	if len(s) > 9 {
		return 0, fmt.Errorf("%q is too large", s)
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%q is not a whole number", s)
		}
	}
	return strconv.Atoi(s)
}
