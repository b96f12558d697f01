package shard

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Shard
	}{
		{"1/1", Shard{1, 1}},
		{"2/3", Shard{2, 3}},
		{"3/3", Shard{3, 3}},
		{"01/03", Shard{1, 3}},
		{"64/64", Shard{64, 64}},
		{"1000000/1000000", Shard{MaxCount, MaxCount}},
	} {
		got, err := Parse(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"0/3", `shard 0/3: shards are numbered from 1`},
		{"4/3", `shard 4/3: shard 4 does not exist, there are 3`},
		{"1/0", `shard 1/0: the number of shards must be at least 1`},
		{"0/0", `shard 0/0: the number of shards must be at least 1`},
		{"", `shard "": want I/N`},
		{"3", `shard "3": want I/N`},
		{"2of3", `shard "2of3": want I/N`},
		{"2-of-3", `shard "2-of-3": want I/N`},
		{"a/3", `shard "a/3": index: "a" is not a whole number`},
		{"2/b", `shard "2/b": count: "b" is not a whole number`},
		{"-1/3", `shard "-1/3": index: "-1" is not a whole number`},
		{"+1/3", `shard "+1/3": index: "+1" is not a whole number`},
		{" 1/3", `shard " 1/3": index: " 1" is not a whole number`},
		{"1/3 ", `shard "1/3 ": count: "3 " is not a whole number`},
		{"1/", `shard "1/": count: empty number`},
		{"/3", `shard "/3": index: empty number`},
		{"1/2/3", `shard "1/2/3": count: "2/3" is not a whole number`},
		{"1.0/3", `shard "1.0/3": index: "1.0" is not a whole number`},
		{"1/10000000000", `shard "1/10000000000": count: "10000000000" is too large`},
		{"1/1000001", `shard 1/1000001: at most 1000000 shards`},
	} {
		got, err := Parse(tc.in)
		if err == nil {
			t.Errorf("Parse(%q) = %v, want error %q", tc.in, got, tc.want)
			continue
		}
		if !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Parse(%q) error = %q, want prefix %q", tc.in, err, tc.want)
		}
	}
}

func TestShardNames(t *testing.T) {
	s := Shard{Index: 2, Count: 12}
	if got := s.String(); got != "2/12" {
		t.Errorf("String = %q, want 2/12", got)
	}
	if got := s.Dir(); got != "2-of-12" {
		t.Errorf("Dir = %q, want 2-of-12", got)
	}
	back, err := ParseDir(s.Dir())
	if err != nil || back != s {
		t.Errorf("ParseDir(%q) = %v, %v; want %v", s.Dir(), back, err, s)
	}
	if !Whole.IsWhole() || s.IsWhole() || Whole.String() != "1/1" {
		t.Errorf("Whole = %v (IsWhole %v), %v.IsWhole = %v", Whole, Whole.IsWhole(), s, s.IsWhole())
	}
	for _, bad := range []string{"2/12", "0-of-3", "4-of-3", "2-of-", "x-of-3", "2-of-3-of-4", "manifest.jsonl"} {
		if got, err := ParseDir(bad); err == nil {
			t.Errorf("ParseDir(%q) = %v, want an error", bad, got)
		}
	}
	if (Shard{}).Validate() == nil {
		t.Error("the zero Shard validates; want an error")
	}
}
