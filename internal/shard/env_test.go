package shard

import (
	"strings"
	"testing"
)

// env is a fake environment for FromEnv.
func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// slurm is the environment of Slurm array task id of --array=lo-hi[:step],
// as slurmd sets it (checked on Slurm 22.05).
func slurm(id, count, lo, hi, step string) []string {
	return []string{
		"SLURM_ARRAY_JOB_ID", "41",
		"SLURM_ARRAY_TASK_ID", id,
		"SLURM_ARRAY_TASK_COUNT", count,
		"SLURM_ARRAY_TASK_MIN", lo,
		"SLURM_ARRAY_TASK_MAX", hi,
		"SLURM_ARRAY_TASK_STEP", step,
	}
}

func TestFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name   string
		env    []string
		shards int
		want   Shard
		reason string
	}{
		{"nothing", nil, 0, Whole, "whole plan (1/1): no --shard flag and no scheduler index"},
		{"non-array Slurm job", []string{"SLURM_JOB_ID", "7", "SLURM_ARRAY_TASK_ID", ""}, 0, Whole, "whole plan"},
		{"Slurm 0-2 first", slurm("0", "3", "0", "2", "1"), 0, Shard{1, 3},
			"shard 1/3 from Slurm array job 41: SLURM_ARRAY_TASK_ID=0, SLURM_ARRAY_TASK_MIN=0, SLURM_ARRAY_TASK_COUNT=3"},
		{"Slurm 0-2 last", slurm("2", "3", "0", "2", "1"), 0, Shard{3, 3}, "shard 3/3 from Slurm array job 41"},
		{"Slurm 1-8", slurm("5", "8", "1", "8", "1"), 0, Shard{5, 8}, "shard 5/8"},
		{"Slurm 10-12", slurm("11", "3", "10", "12", "1"), 0, Shard{2, 3}, "shard 2/3"},
		{"Slurm 0-14:2", slurm("6", "8", "0", "14", "2"), 0, Shard{4, 8},
			"shard 4/8 from Slurm array job 41: SLURM_ARRAY_TASK_ID=6, SLURM_ARRAY_TASK_MIN=0, SLURM_ARRAY_TASK_COUNT=8, SLURM_ARRAY_TASK_STEP=2"},
		{"Slurm one task", slurm("4", "1", "4", "4", "1"), 0, Shard{1, 1}, "shard 1/1"},
		{"Slurm without MAX and STEP", []string{"SLURM_ARRAY_TASK_ID", "3", "SLURM_ARRAY_TASK_COUNT", "4", "SLURM_ARRAY_TASK_MIN", "0"}, 0, Shard{4, 4},
			"shard 4/4 from the Slurm array: SLURM_ARRAY_TASK_ID=3"},
		{"Slurm with agreeing --shards", slurm("1", "3", "0", "2", "1"), 3, Shard{2, 3}, "shard 2/3"},
		{"Slurm with agreeing TRACEGRID_SHARDS", append(slurm("1", "3", "0", "2", "1"), "TRACEGRID_SHARDS", "3"), 0, Shard{2, 3}, "shard 2/3"},
		{"k8s flag", []string{"JOB_COMPLETION_INDEX", "0"}, 4, Shard{1, 4},
			"shard 1/4 from the Kubernetes Indexed Job: JOB_COMPLETION_INDEX=0, --shards 4"},
		{"k8s env", []string{"JOB_COMPLETION_INDEX", "3", "TRACEGRID_SHARDS", "4"}, 0, Shard{4, 4},
			"shard 4/4 from the Kubernetes Indexed Job: JOB_COMPLETION_INDEX=3, TRACEGRID_SHARDS=4"},
		{"k8s both agree", []string{"JOB_COMPLETION_INDEX", "1", "TRACEGRID_SHARDS", "2"}, 2, Shard{2, 2}, "--shards 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, reason, err := FromEnv(env(tc.env...), tc.shards)
			if err != nil {
				t.Fatalf("FromEnv: %v", err)
			}
			if got != tc.want {
				t.Errorf("shard = %v, want %v", got, tc.want)
			}
			if !strings.Contains(reason, tc.reason) {
				t.Errorf("reason = %q, want it to contain %q", reason, tc.reason)
			}
		})
	}
}

func TestFromEnvErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		env    []string
		shards int
		want   string // substring of the error
	}{
		{"Slurm ID only", []string{"SLURM_ARRAY_TASK_ID", "1"}, 0,
			"incomplete Slurm array environment: SLURM_ARRAY_TASK_ID set but SLURM_ARRAY_TASK_COUNT, SLURM_ARRAY_TASK_MIN missing"},
		{"Slurm without MIN", []string{"SLURM_ARRAY_TASK_ID", "1", "SLURM_ARRAY_TASK_COUNT", "3"}, 0, "SLURM_ARRAY_TASK_MIN missing"},
		{"Slurm COUNT without ID", []string{"SLURM_ARRAY_TASK_COUNT", "3", "SLURM_ARRAY_TASK_MIN", "0"}, 0, "SLURM_ARRAY_TASK_ID missing"},
		{"Slurm list with gaps", slurm("3", "3", "1", "7", "1"), 0,
			"Slurm array task ids are not a range (SLURM_ARRAY_TASK_ID=3, SLURM_ARRAY_TASK_MIN=1, SLURM_ARRAY_TASK_COUNT=3, SLURM_ARRAY_TASK_MAX=7)"},
		{"Slurm step disagrees with MAX", slurm("4", "3", "0", "4", "1"), 0, "not a range"},
		{"Slurm id below MIN", slurm("0", "3", "1", "3", "1"), 0, "Slurm array task 0 is not one of the array's 3 tasks"},
		{"Slurm id off the step", slurm("3", "8", "0", "14", "2"), 0, "Slurm array task 3 is not one of the array's 8 tasks"},
		{"Slurm id above the range", []string{"SLURM_ARRAY_TASK_ID", "5", "SLURM_ARRAY_TASK_COUNT", "3", "SLURM_ARRAY_TASK_MIN", "0"}, 0,
			"Slurm array task 5 is not one of the array's 3 tasks"},
		{"Slurm junk id", slurm("two", "3", "0", "2", "1"), 0, `SLURM_ARRAY_TASK_ID="two": "two" is not a whole number`},
		{"Slurm zero count", slurm("0", "0", "0", "0", "1"), 0, "SLURM_ARRAY_TASK_COUNT=0: want 1 to"},
		{"Slurm zero step", slurm("0", "3", "0", "2", "0"), 0, "SLURM_ARRAY_TASK_STEP=0: want ≥ 1"},
		{"Slurm and --shards disagree", slurm("4", "1", "4", "4", "1"), 10, "--shards 10 but the Slurm array has 1 tasks"},
		{"Slurm and TRACEGRID_SHARDS disagree", append(slurm("0", "3", "0", "2", "1"), "TRACEGRID_SHARDS", "4"), 0,
			"TRACEGRID_SHARDS=4 but the Slurm array has 3 tasks"},
		{"Slurm and k8s", append(slurm("0", "3", "0", "2", "1"), "JOB_COMPLETION_INDEX", "0"), 3,
			"both a Slurm array (SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT, SLURM_ARRAY_TASK_MIN, SLURM_ARRAY_TASK_MAX, SLURM_ARRAY_TASK_STEP) and a Kubernetes Indexed Job (JOB_COMPLETION_INDEX)"},
		{"k8s without a count", []string{"JOB_COMPLETION_INDEX", "2"}, 0,
			"JOB_COMPLETION_INDEX=2 but no number of shards: pass --shards N or set TRACEGRID_SHARDS"},
		{"k8s index out of range", []string{"JOB_COMPLETION_INDEX", "4"}, 4, "JOB_COMPLETION_INDEX=4 is out of range for 4 shards (indices 0 to 3; --shards 4)"},
		{"k8s junk index", []string{"JOB_COMPLETION_INDEX", "-1"}, 4, `JOB_COMPLETION_INDEX="-1": "-1" is not a whole number`},
		{"k8s count disagrees", []string{"JOB_COMPLETION_INDEX", "0", "TRACEGRID_SHARDS", "4"}, 3, "--shards 3 and TRACEGRID_SHARDS=4 disagree"},
		{"TRACEGRID_SHARDS zero", []string{"JOB_COMPLETION_INDEX", "0", "TRACEGRID_SHARDS", "0"}, 0, `TRACEGRID_SHARDS="0": want 1 to 1000000`},
		{"TRACEGRID_SHARDS junk", []string{"JOB_COMPLETION_INDEX", "0", "TRACEGRID_SHARDS", "3 "}, 0, `TRACEGRID_SHARDS="3 ": "3 " is not a whole number`},
		{"count without index (flag)", nil, 3, "--shards 3 names the number of shards but no index is set"},
		{"count without index (env)", []string{"TRACEGRID_SHARDS", "3"}, 0, "TRACEGRID_SHARDS=3 names the number of shards but no index is set"},
		{"negative --shards", nil, -2, "--shards -2: want a number of shards ≥ 1"},
		{"huge --shards", []string{"JOB_COMPLETION_INDEX", "0"}, MaxCount + 1, "--shards 1000001: at most 1000000 shards"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := FromEnv(env(tc.env...), tc.shards)
			if err == nil {
				t.Fatalf("FromEnv = %v, want an error containing %q", got, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %q\nwant it to contain %q", err, tc.want)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	inSlurm := env(slurm("2", "3", "0", "2", "1")...)
	s, reason, err := Resolve("1/2", 0, inSlurm)
	if err != nil || s != (Shard{1, 2}) {
		t.Fatalf("Resolve(1/2) in a Slurm task = %v, %v; want 1/2", s, err)
	}
	if want := "shard 1/2 from --shard (the flag wins over SLURM_ARRAY_TASK_ID)"; reason != want {
		t.Errorf("reason = %q, want %q", reason, want)
	}
	s, reason, err = Resolve("", 0, inSlurm)
	if err != nil || s != (Shard{3, 3}) || !strings.HasPrefix(reason, "shard 3/3 from Slurm array job 41") {
		t.Errorf("Resolve without a flag = %v, %q, %v; want 3/3 from the Slurm array", s, reason, err)
	}
	s, reason, err = Resolve("2/2", 0, env())
	if err != nil || s != (Shard{2, 2}) || reason != "shard 2/2 from --shard" {
		t.Errorf("Resolve(2/2) = %v, %q, %v", s, reason, err)
	}
	if _, _, err := Resolve("2/2", 2, env()); err == nil || !strings.Contains(err.Error(), "--shard 2/2 and --shards 2 together") {
		t.Errorf("Resolve with --shard and --shards: err = %v", err)
	}
	if _, _, err := Resolve("0/2", 0, env()); err == nil || !strings.HasPrefix(err.Error(), "--shard: shard 0/2: shards are numbered from 1") {
		t.Errorf("Resolve(0/2): err = %v", err)
	}
}
