//go:build tools

// Package tools pins scip-go, the precise pass's indexer for Go (cg/ingest/resolve/scip.py);
// scripts/test builds it from this module with `go build`.
package tools

import _ "github.com/sourcegraph/scip-go/cmd/scip-go"
