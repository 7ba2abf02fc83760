//go:build tools

// Package tools pins the binary built by build.sh so `go mod tidy` keeps its dependencies.
package tools

import (
	_ "github.com/jaegertracing/jaeger/cmd/jaeger"
)
