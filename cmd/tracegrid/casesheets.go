package main

import "github.com/tracegrid/tracegrid/job"

// caseSheets draws the report's case sheets: job.CaseSheets, whose zero
// value makes its renderer on first use (`tracegrid report`).
type caseSheets = job.CaseSheets
