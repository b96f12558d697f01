package shard

import (
	"fmt"
	"strings"
)

// Environment variables read by FromEnv.
const (
	EnvSlurmTaskID    = "SLURM_ARRAY_TASK_ID"
	EnvSlurmTaskCount = "SLURM_ARRAY_TASK_COUNT"
	EnvSlurmTaskMin   = "SLURM_ARRAY_TASK_MIN"
	EnvSlurmTaskMax   = "SLURM_ARRAY_TASK_MAX"
	EnvSlurmTaskStep  = "SLURM_ARRAY_TASK_STEP"
	EnvSlurmJobID     = "SLURM_ARRAY_JOB_ID"
	EnvK8sIndex       = "JOB_COMPLETION_INDEX"
	// EnvShards is the number of shards of a Kubernetes Indexed Job (its
	// completions), for processes started without --shards.
	EnvShards = "TRACEGRID_SHARDS"
)

// Resolve picks the shard for one process: the --shard flag when given
// (flag, "I/N"), else FromEnv. shardsFlag is --shards (0 when not given).
// It returns the shard and a one-line reason for the log.
func Resolve(flag string, shardsFlag int, getenv func(string) string) (Shard, string, error) {
	if flag == "" {
		return FromEnv(getenv, shardsFlag)
	}
	if shardsFlag != 0 {
		return Shard{}, "", fmt.Errorf("--shard %s and --shards %d together: --shard already names the count", flag, shardsFlag)
	}
	s, err := Parse(flag)
	if err != nil {
		return Shard{}, "", fmt.Errorf("--shard: %w", err)
	}
	reason := fmt.Sprintf("shard %s from --shard", s)
	if set := setVars(getenv, EnvSlurmTaskID, EnvK8sIndex, EnvShards); len(set) > 0 {
		reason += " (the flag wins over " + strings.Join(set, ", ") + ")"
	}
	return s, reason, nil
}

// FromEnv derives the shard from a scheduler's environment, read through
// getenv (os.Getenv in production; an empty value counts as unset).
// shardsFlag is --shards N, 0 when not given. Without any scheduler
// variable the result is Whole. The reason says which variables decided.
func FromEnv(getenv func(string) string, shardsFlag int) (Shard, string, error) {
	if shardsFlag < 0 {
		return Shard{}, "", fmt.Errorf("--shards %d: want a number of shards ≥ 1", shardsFlag)
	}
	count, countFrom, err := shardCount(getenv, shardsFlag)
	if err != nil {
		return Shard{}, "", err
	}
	slurm := setVars(getenv, EnvSlurmTaskID, EnvSlurmTaskCount, EnvSlurmTaskMin, EnvSlurmTaskMax, EnvSlurmTaskStep)
	k8s := getenv(EnvK8sIndex) != ""
	switch {
	case len(slurm) > 0 && k8s:
		return Shard{}, "", fmt.Errorf("both a Slurm array (%s) and a Kubernetes Indexed Job (%s) are in the environment: unset one, or pass --shard I/N",
			strings.Join(slurm, ", "), EnvK8sIndex)
	case len(slurm) > 0:
		return fromSlurm(getenv, count, countFrom)
	case k8s:
		return fromK8s(getenv, count, countFrom)
	case count != 0:
		return Shard{}, "", fmt.Errorf("%s names the number of shards but no index is set: run under a Kubernetes Indexed Job (%s) or a Slurm array, or pass --shard I/N",
			countFrom, EnvK8sIndex)
	}
	return Whole, "whole plan (1/1): no --shard flag and no scheduler index in the environment (" + EnvSlurmTaskID + ", " + EnvK8sIndex + ")", nil
}

// shardCount reads --shards and TRACEGRID_SHARDS; when both are given they
// must agree. It returns 0 when neither is.
func shardCount(getenv func(string) string, shardsFlag int) (int, string, error) {
	envText := getenv(EnvShards)
	if envText == "" {
		if shardsFlag == 0 {
			return 0, "", nil
		}
		if shardsFlag > MaxCount {
			return 0, "", fmt.Errorf("--shards %d: at most %d shards", shardsFlag, MaxCount)
		}
		return shardsFlag, fmt.Sprintf("--shards %d", shardsFlag), nil
	}
	n, err := parseCount(envText)
	if err == nil && (n < 1 || n > MaxCount) {
		err = fmt.Errorf("want 1 to %d", MaxCount)
	}
	if err != nil {
		return 0, "", fmt.Errorf("%s=%q: %w", EnvShards, envText, err)
	}
	if shardsFlag != 0 && shardsFlag != n {
		return 0, "", fmt.Errorf("--shards %d and %s=%d disagree", shardsFlag, EnvShards, n)
	}
	if shardsFlag != 0 {
		return n, fmt.Sprintf("--shards %d", n), nil
	}
	return n, fmt.Sprintf("%s=%d", EnvShards, n), nil
}

// fromSlurm maps a Slurm array task to a shard: I = (ID − MIN)/STEP + 1,
// N = COUNT, for arrays that are ranges (MAX − MIN = (COUNT − 1)·STEP).
func fromSlurm(getenv func(string) string, count int, countFrom string) (Shard, string, error) {
	var missing []string
	for _, v := range []string{EnvSlurmTaskID, EnvSlurmTaskCount, EnvSlurmTaskMin} {
		if getenv(v) == "" {
			missing = append(missing, v)
		}
	}
	if len(missing) > 0 {
		return Shard{}, "", fmt.Errorf("incomplete Slurm array environment: %s set but %s missing (a Slurm array task has all of them; elsewhere pass --shard I/N)",
			strings.Join(setVars(getenv, EnvSlurmTaskID, EnvSlurmTaskCount, EnvSlurmTaskMin, EnvSlurmTaskMax, EnvSlurmTaskStep), ", "),
			strings.Join(missing, ", "))
	}
	num := func(name string) (int, error) {
		v, err := parseCount(getenv(name))
		if err != nil {
			return 0, fmt.Errorf("%s=%q: %w", name, getenv(name), err)
		}
		return v, nil
	}
	id, err := num(EnvSlurmTaskID)
	if err != nil {
		return Shard{}, "", err
	}
	n, err := num(EnvSlurmTaskCount)
	if err != nil {
		return Shard{}, "", err
	}
	lo, err := num(EnvSlurmTaskMin)
	if err != nil {
		return Shard{}, "", err
	}
	step := 1
	if getenv(EnvSlurmTaskStep) != "" {
		if step, err = num(EnvSlurmTaskStep); err != nil {
			return Shard{}, "", err
		}
		if step < 1 {
			return Shard{}, "", fmt.Errorf("%s=%d: want ≥ 1", EnvSlurmTaskStep, step)
		}
	}
	if n < 1 || n > MaxCount {
		return Shard{}, "", fmt.Errorf("%s=%d: want 1 to %d", EnvSlurmTaskCount, n, MaxCount)
	}
	desc := fmt.Sprintf("%s=%d, %s=%d, %s=%d", EnvSlurmTaskID, id, EnvSlurmTaskMin, lo, EnvSlurmTaskCount, n)
	if step != 1 {
		desc += fmt.Sprintf(", %s=%d", EnvSlurmTaskStep, step)
	}
	if getenv(EnvSlurmTaskMax) != "" {
		hi, err := num(EnvSlurmTaskMax)
		if err != nil {
			return Shard{}, "", err
		}
		if hi-lo != (n-1)*step {
			return Shard{}, "", fmt.Errorf("Slurm array task ids are not a range (%s, %s=%d): the shard of task %d cannot be told from the environment; submit a range such as --array=0-%d, or pass --shard I/N",
				desc, EnvSlurmTaskMax, hi, id, n-1)
		}
	}
	off := id - lo
	if off < 0 || off%step != 0 || off/step >= n {
		return Shard{}, "", fmt.Errorf("Slurm array task %d is not one of the array's %d tasks (%s)", id, n, desc)
	}
	if count != 0 && count != n {
		return Shard{}, "", fmt.Errorf("%s but the Slurm array has %d tasks (%s): to run some shards again, submit the whole array (finished work is skipped) or pass --shard I/N",
			countFrom, n, desc)
	}
	s := Shard{Index: off/step + 1, Count: n}
	reason := fmt.Sprintf("shard %s from the Slurm array: %s", s, desc)
	if job := getenv(EnvSlurmJobID); job != "" {
		reason = fmt.Sprintf("shard %s from Slurm array job %s: %s", s, job, desc)
	}
	return s, reason, nil
}

// fromK8s maps a Kubernetes Indexed Job completion index (0-based) to a
// shard; the count comes from --shards or TRACEGRID_SHARDS.
func fromK8s(getenv func(string) string, count int, countFrom string) (Shard, string, error) {
	text := getenv(EnvK8sIndex)
	idx, err := parseCount(text)
	if err != nil {
		return Shard{}, "", fmt.Errorf("%s=%q: %w", EnvK8sIndex, text, err)
	}
	if count == 0 {
		return Shard{}, "", fmt.Errorf("%s=%d but no number of shards: pass --shards N or set %s to the Job's completions",
			EnvK8sIndex, idx, EnvShards)
	}
	if idx >= count {
		return Shard{}, "", fmt.Errorf("%s=%d is out of range for %d shards (indices 0 to %d; %s)",
			EnvK8sIndex, idx, count, count-1, countFrom)
	}
	s := Shard{Index: idx + 1, Count: count}
	return s, fmt.Sprintf("shard %s from the Kubernetes Indexed Job: %s=%d, %s", s, EnvK8sIndex, idx, countFrom), nil
}

// setVars lists the names among vars that have a non-empty value.
func setVars(getenv func(string) string, vars ...string) []string {
	var set []string
	for _, v := range vars {
		if getenv(v) != "" {
			set = append(set, v)
		}
	}
	return set
}
