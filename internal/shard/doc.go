// Package shard splits a plan (the clips of a render, the trials of an
// evaluation) into N deterministic parts, balanced by estimated cost, so
// that a cluster scheduler can run the parts as independent processes:
// Slurm job arrays, Kubernetes Indexed Jobs, or a shell loop.
//
// tracegrid does not run a cluster of its own. Every process of an array
// computes the same partition from the same plan (Partition is a pure
// function of the costs and N: no randomness, no maps, no dependence on the
// machine) and takes its own part; the union of the parts is exactly the
// plan and no item is in two parts.
//
// # Naming a shard
//
// A Shard is "I/N", 1-based: 1/3, 2/3, 3/3. Parse reads the --shard flag;
// FromEnv derives the shard from the scheduler's environment when the flag
// is absent:
//
//   - Slurm job arrays: SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT and
//     SLURM_ARRAY_TASK_MIN, with SLURM_ARRAY_TASK_MAX and
//     SLURM_ARRAY_TASK_STEP checked when present. I = (ID − MIN)/STEP + 1,
//     N = COUNT. The array must be a range (--array=0-7, 1-8, 0-14:2, with
//     or without a %limit); a list with gaps (--array=1,3,7) has no rank
//     in the environment and is refused.
//   - Kubernetes Indexed Jobs: JOB_COMPLETION_INDEX (0-based), I = index+1,
//     and N from --shards N or TRACEGRID_SHARDS (set it to the Job's
//     completions). The index alone does not tell N.
//   - Neither: the whole plan, 1/1.
//
// Partial or contradictory settings are errors that name the variables:
// an index without a count, both schedulers at once, a --shards or
// TRACEGRID_SHARDS that disagrees with Slurm's count. FromEnv also returns
// a one-line reason for the log ("shard 2/3 from the Slurm array: …").
//
// # Cost
//
// Parts are balanced by an estimate of each item's work, not by item count:
//
//   - render and variants: RenderCost = frames × width × height (pixels
//     rendered, converted and encoded);
//   - eval: EvalCost = requests × images, with images counted as at least
//     1 per request so a trial that sends a video or text only still
//     weighs something.
//
// Callers compute the costs (they know the plan); the helpers only fix the
// formulas in one place.
//
// # Partition
//
// Partition is longest-processing-time-first greedy: items in order of
// decreasing cost (ties: lower plan index first) each go to the part with
// the least cost so far (ties: fewer items, then lower part number). Inside
// a part the indices are returned in plan order. The largest part's cost is
// at most the mean part cost plus the largest item's cost, and at most 4/3
// of the best possible split. Costs must be finite and ≥ 0. N may exceed the
// number of items: the extra parts are empty, and a process given an empty
// part still records that it ran (so a merge can tell "empty" from
// "missing").
package shard
